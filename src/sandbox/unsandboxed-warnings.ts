import type { AgentDefinition } from "../definitions/agent-definition.js";
import type { Logger } from "../logging/logger.js";

/**
 * Warns once per loaded version of an agent whose sandbox is off: the daemon calls it with the
 * serving definitions at start and after every change.
 */
export function unsandboxedAgentWarner(logger: Logger): (definitions: readonly AgentDefinition[]) => void {
  const warned = new Set<string>();
  return (definitions) => {
    for (const definition of definitions) {
      if (definition.sandbox.mode !== "off") continue;
      const key = `${definition.id}\u0000${definition.hash}`;
      if (warned.has(key)) continue;
      warned.add(key);
      logger.warn(
        { agent: definition.id, file: definition.file },
        "sandbox: off — this agent's shell commands and CLI worker run without the OS sandbox and can read every secret the daemon can",
      );
    }
  };
}
