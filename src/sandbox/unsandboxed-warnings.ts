import type { AgentDefinition } from "../definitions/agent-definition.js";
import type { EventDataByType } from "../events/agent-event.js";
import type { Logger } from "../logging/logger.js";
import type { SandboxSettings } from "../config/sandbox-settings.js";

/** True when the settings switch a fence off: no OS sandbox (`mode: off`), or `network: all`. */
export function isUnsandboxed(settings: Pick<SandboxSettings, "mode" | "network">): boolean {
  return settings.mode === "off" || settings.network === "all";
}

/**
 * What is off and what that exposes, in one sentence for a person; undefined for a sandbox that
 * keeps both its filesystem and its network fence.
 */
export function unsandboxedDescription(
  settings: Pick<SandboxSettings, "mode" | "network">,
): string | undefined {
  if (settings.mode === "off") {
    return (
      "sandbox: off — this agent's shell commands, CLI worker and hooks run without the OS sandbox: " +
      "they can read every secret the daemon can (the vault, the config, $HOME), write wherever the " +
      "daemon can and reach any host"
    );
  }
  if (settings.network === "all") {
    return (
      "sandbox network: all — this agent's shell commands, CLI worker and hooks share the host's network: " +
      "they reach every host and this machine's loopback services (local databases, cloud metadata, " +
      "the daemon's API) and can send out whatever they can read"
    );
  }
  return undefined;
}

/** The `warning` event every run of such an agent starts with; undefined for a sandboxed agent. */
export function unsandboxedRunWarning(
  definition: Pick<AgentDefinition, "sandbox">,
): EventDataByType["warning"] | undefined {
  const description = unsandboxedDescription(definition.sandbox);
  return description === undefined ? undefined : { code: "UNSANDBOXED", message: description };
}

/** The ids of the agents among `definitions` whose sandbox is off or shares the host's network. */
export function unsandboxedAgentIds(definitions: readonly AgentDefinition[]): string[] {
  return definitions.filter((definition) => isUnsandboxed(definition.sandbox)).map(({ id }) => id);
}

/**
 * Warns once per loaded version of an agent whose sandbox is off or shares the host's network:
 * the daemon calls it with the serving definitions at start and after every change.
 */
export function unsandboxedAgentWarner(logger: Logger): (definitions: readonly AgentDefinition[]) => void {
  const warned = new Set<string>();
  return (definitions) => {
    for (const definition of definitions) {
      const description = unsandboxedDescription(definition.sandbox);
      if (description === undefined) continue;
      const key = `${definition.id}\u0000${definition.hash}`;
      if (warned.has(key)) continue;
      warned.add(key);
      logger.warn({ agent: definition.id, file: definition.file }, description);
    }
  };
}
