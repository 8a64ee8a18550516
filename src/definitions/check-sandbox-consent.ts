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

/** True when the agent runs with a fence off: its sandbox (config, then its file) is `off` or `network: all`. */
function runsUnfenced(
  id: string,
  frontmatter: Pick<AgentFrontmatter, "sandbox">,
  config: Pick<Config, "sandbox">,
) {
  const request = unsandboxedRequest(frontmatter, config);
  // A file that asks without consent is invalid: it never runs so.
  if ((request.modeOff || request.networkAll) && !unsandboxedAllowed(id, config)) return false;
  const mode = frontmatter.sandbox?.mode ?? config.sandbox.mode;
  const network = frontmatter.sandbox?.network ?? config.sandbox.network;
  return mode === "off" || network === "all";
}

/**
 * The ids that run with a fence off, or hand work through `agents:` (at any depth) to one that
 * does, from every agent's `agents:` list and `sandbox:` as their files declare them.
 */
export function unfencedReach(
  agents: ReadonlyMap<string, Pick<AgentFrontmatter, "sandbox" | "agents" | "capabilities"> | undefined>,
  config: Pick<Config, "sandbox">,
): Set<string> {
  const reach = new Set<string>();
  for (const [id, frontmatter] of agents)
    if (frontmatter && runsUnfenced(id, frontmatter, config)) reach.add(id);
  // Callers of what is in the set join it, until nothing changes.
  for (let grew = true; grew;) {
    grew = false;
    for (const [id, frontmatter] of agents) {
      if (reach.has(id) || !frontmatter || !callable(frontmatter).some((child) => reach.has(child))) continue;
      reach.add(id);
      grew = true;
    }
  }
  return reach;
}

/**
 * SANDBOX_OFF_NOT_ALLOWED for each sub-agent in `agents:` that runs with its fence off (or hands
 * work to one that does) when this agent itself is fenced and config does not name it: handing a
 * task to an unsandboxed agent is switching the fence off by proxy.
 */
export function checkUnfencedSubAgents(
  agent: ParsedAgentFile & { frontmatter: AgentFrontmatter },
  unfenced: ReadonlySet<string>,
  config: Pick<Config, "sandbox">,
): AgentdError[] {
  if (runsUnfenced(agent.id, agent.frontmatter, config) || unsandboxedAllowed(agent.id, config)) return [];
  const listed = config.sandbox.allow_unsandboxed;
  const offered = callable(agent.frontmatter);
  return agent.frontmatter.agents.flatMap((child, index) => {
    if (!unfenced.has(child) || !offered.includes(child)) return [];
    const line = agent.lineOf(["agents", index]);
    return [
      new AgentdError(
        "SANDBOX_OFF_NOT_ALLOWED",
        `agent "${agent.id}" lists "${child}" in agents:, which runs without its sandbox (or hands work to an ` +
          "agent that does): a sandboxed agent may not hand it work, which would switch its own fence off by proxy",
        {
          file: agent.file,
          ...(line === undefined ? {} : { line }),
          field: `agents[${index}]`,
          hint:
            `if "${agent.id}" may drive an unsandboxed agent, add it to the config: sandbox: { allow_unsandboxed: ` +
            `[${[...listed, agent.id].map((entry) => JSON.stringify(entry)).join(", ")}] }; otherwise remove "${child}" from agents:`,
          details: { agent: agent.id, sub_agent: child, config_key: "sandbox.allow_unsandboxed" },
        },
      ),
    ];
  });
}

/** The sub-agents the model is offered: none unless `capabilities: full` (apply-capabilities.ts). */
function callable(frontmatter: Pick<AgentFrontmatter, "agents" | "capabilities">): readonly string[] {
  return frontmatter.capabilities === "full" ? frontmatter.agents : [];
}
