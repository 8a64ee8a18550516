import picomatch from "picomatch";
import type { Config } from "../config/config-schema.js";
import { AgentdError } from "../errors/agentd-error.js";
import type { AgentFrontmatter } from "./agent-schema.js";
import type { ParsedAgentFile } from "./parse-agent-file.js";

/** What an agent file asks of its sandbox that only the operator may grant. */
export interface UnsandboxedRequest {
  /** `mode: off` (or `sandbox: off`): no OS sandbox at all. */
  modeOff: boolean;
  /** `network: all`: the host's whole network, loopback services included. */
  networkAll: boolean;
}

/**
 * What the agent's own file asks for that would switch its fence off: `sandbox: off`,
 * `{ mode: off }` or `{ network: all }`, beyond what config `sandbox` already is (the operator's
 * own `sandbox: off` or `network: all` applies to every agent and asks for no consent).
 */
export function unsandboxedRequest(
  frontmatter: Pick<AgentFrontmatter, "sandbox">,
  config: Pick<Config, "sandbox">,
): UnsandboxedRequest {
  const asked = frontmatter.sandbox;
  return {
    modeOff: asked?.mode === "off" && config.sandbox.mode !== "off",
    networkAll: asked?.network === "all" && config.sandbox.network !== "all",
  };
}

/** True when an entry of config `sandbox.allow_unsandboxed` (an id or a picomatch glob) names `id`. */
export function unsandboxedAllowed(id: string, config: Pick<Config, "sandbox">): boolean {
  return config.sandbox.allow_unsandboxed.some((entry) => picomatch.isMatch(id, entry));
}

/**
 * SANDBOX_OFF_NOT_ALLOWED when the agent's own file switches its sandbox (or its network fence)
 * off and config `sandbox.allow_unsandboxed` does not name it: a process that can write into an
 * agents folder must not be able to give itself the daemon's full power. Undefined when allowed.
 */
export function checkSandboxConsent(
  agent: ParsedAgentFile & { frontmatter: AgentFrontmatter },
  config: Pick<Config, "sandbox">,
): AgentdError | undefined {
  const request = unsandboxedRequest(agent.frontmatter, config);
  if (!request.modeOff && !request.networkAll) return undefined;
  if (unsandboxedAllowed(agent.id, config)) return undefined;
  const asked = [request.modeOff ? "mode: off" : undefined, request.networkAll ? "network: all" : undefined]
    .filter((entry) => entry !== undefined)
    .join(" and ");
  const listed = config.sandbox.allow_unsandboxed;
  const line = agent.lineOf(["sandbox"]);
  return new AgentdError(
    "SANDBOX_OFF_NOT_ALLOWED",
    `agent "${agent.id}" asks for sandbox ${asked}, which the config does not allow: ` +
      "an agent file may narrow its sandbox, not switch it off",
    {
      file: agent.file,
      ...(line === undefined ? {} : { line }),
      field: "sandbox",
      hint:
        `if this agent may run ${request.modeOff ? "without the OS sandbox (reading every secret the daemon can)" : "with the host's whole network"}, ` +
        `add it to the config: sandbox: { allow_unsandboxed: [${[...listed, agent.id].map((entry) => JSON.stringify(entry)).join(", ")}] }; ` +
        "otherwise remove it from the agent file",
      details: {
        agent: agent.id,
        asked: {
          ...(request.modeOff ? { mode: "off" } : {}),
          ...(request.networkAll ? { network: "all" } : {}),
        },
        config_key: "sandbox.allow_unsandboxed",
      },
    },
  );
}
