import os from "node:os";
import path from "node:path";
import type { Config } from "../config/config-schema.js";
import { AgentdError } from "../errors/agentd-error.js";
import { existingRealPath } from "../sandbox/sandbox-mounts.js";
import { isWithin } from "../util/path-within.js";
import { resolveSandboxPath } from "../config/sandbox-settings.js";
import type { AgentFrontmatter } from "./agent-schema.js";
import { unsandboxedAllowed } from "./check-sandbox-consent.js";
import type { ParsedAgentFile } from "./parse-agent-file.js";

/**
 * SANDBOX_OFF_NOT_ALLOWED when the agent's own file lists in its sandbox `read:` or `write:` the
 * whole filesystem or a whole home folder (or a folder that holds one): `write: ["/"]` or
 * `write: ["~"]` is the fence switched off by another name (a home's start-up files run outside
 * any sandbox, its keys are what the sandbox hides). Paths inside a home (`~/.gitconfig`) are
 * fine. Config `sandbox.allow_unsandboxed` grants it, as it grants `mode: off`.
 */
export function checkSandboxBinds(
  agent: ParsedAgentFile & { frontmatter: AgentFrontmatter },
  config: Pick<Config, "sandbox" | "agents_dir">,
): AgentdError | undefined {
  const asked = agent.frontmatter.sandbox;
  if (asked === undefined || unsandboxedAllowed(agent.id, config)) return undefined;
  const project = path.dirname(config.agents_dir);
  const homes = homeFolders();
  for (const key of ["read", "write"] as const) {
    for (const entry of asked[key] ?? []) {
      const resolved = resolveSandboxPath(entry, project);
      const real = existingRealPath(resolved) ?? resolved;
      const covered = real === "/" ? "the whole filesystem" : homes.find((home) => isWithin(home, real));
      if (covered === undefined) continue;
      const line = agent.lineOf(["sandbox", key]);
      return new AgentdError(
        "SANDBOX_OFF_NOT_ALLOWED",
        `agent "${agent.id}" lists ${JSON.stringify(entry)} in its sandbox ${key}:, which opens ${covered === "the whole filesystem" ? covered : `the home folder ${covered}`}: ` +
          "an agent file may narrow its sandbox, not open what it hides",
        {
          file: agent.file,
          ...(line === undefined ? {} : { line }),
          field: `sandbox.${key}`,
          hint:
            "list only what a tool needs inside it (such as ~/.gitconfig or ~/.config/<tool>), or, if this agent " +
            `may see it all, add it to the config: sandbox: { allow_unsandboxed: [${JSON.stringify(agent.id)}] }`,
          details: { agent: agent.id, entry, config_key: "sandbox.allow_unsandboxed" },
        },
      );
    }
  }
  return undefined;
}

/** $HOME, os.homedir() and the passwd home, as real paths. */
function homeFolders(): string[] {
  const homes = new Set<string>([os.homedir()]);
  if (process.env["HOME"]) homes.add(process.env["HOME"]);
  try {
    homes.add(os.userInfo().homedir);
  } catch {
    // No passwd entry (a container's odd uid): $HOME is all there is.
  }
  return [...homes].filter((home) => home !== "/").map((home) => existingRealPath(home) ?? home);
}
