import os from "node:os";
import path from "node:path";
import { CLI_EXECUTED_NAMES } from "./host-executed-paths.js";

/** What a CLI worker needs from its sandbox beyond the agent's own settings. */
export interface CliSandboxNeeds {
  /** Hosts its API lives on: reachable whatever the agent's `network` says (unless `all`). */
  hosts: string[];
  /** Its config and credentials folders and files: writable (when they exist). */
  write: string[];
  /**
   * A folder the worker creates when missing, as the CLI would on the host: Gemini CLI's, which it
   * writes at every start (a missing one cannot be bound writable, and the CLI then fails: EROFS).
   */
  create: string[];
  /** What in those folders the CLI runs as code (settings with hooks, commands): read-only. */
  protect: string[];
}

/** The API hosts of the built-in CLIs (their logins and model calls). */
const BUILT_IN_HOSTS: Record<string, string[]> = {
  claude: ["api.anthropic.com", "statsig.anthropic.com", "console.anthropic.com", "claude.ai"],
  codex: ["api.openai.com", "auth.openai.com", "chatgpt.com"],
  gemini: [
    "generativelanguage.googleapis.com",
    "cloudcode-pa.googleapis.com",
    "oauth2.googleapis.com",
    "www.googleapis.com",
    "play.googleapis.com",
  ],
};

/**
 * The sandbox defaults of a CLI worker, so that `worker: cli` works without a sandbox section:
 * the built-in CLI's API hosts and config folders (claude: ~/.claude, ~/.claude.json or
 * CLAUDE_CONFIG_DIR; codex: CODEX_HOME or ~/.codex; gemini: $GEMINI_CLI_HOME/.gemini or ~/.gemini), and for any CLI the host
 * of every `*_BASE_URL` variable in its environment (its configured `env` over the daemon's).
 */
export function cliSandboxNeeds(
  tool: string,
  environment: Record<string, string | undefined>,
): CliSandboxNeeds {
  const home = environment["HOME"] || os.homedir();
  const write: string[] = [];
  let configFolder: string | undefined;
  if (tool === "claude") {
    configFolder = environment["CLAUDE_CONFIG_DIR"] || path.join(home, ".claude");
    write.push(configFolder, path.join(home, ".claude.json"));
  }
  if (tool === "codex") write.push((configFolder = environment["CODEX_HOME"] || path.join(home, ".codex")));
  // Gemini CLI keeps its folder in $GEMINI_CLI_HOME/.gemini when that is set, else ~/.gemini.
  if (tool === "gemini") {
    write.push((configFolder = path.join(environment["GEMINI_CLI_HOME"] || home, ".gemini")));
  }
  const protect =
    configFolder === undefined
      ? []
      : (CLI_EXECUTED_NAMES[tool] ?? []).map((name) => path.join(configFolder, name));
  const hosts = [...(BUILT_IN_HOSTS[tool] ?? [])];
  for (const [name, value] of Object.entries(environment)) {
    if (!/_BASE_URL$/.test(name) || value === undefined) continue;
    const host = hostOfUrl(value);
    if (host !== undefined) hosts.push(host);
  }
  const create = tool === "gemini" && configFolder !== undefined ? [configFolder] : [];
  return { hosts, write, protect, create };
}

/** `host:port` of an http(s) URL (the scheme's port when none is written), or undefined. */
function hostOfUrl(value: string): string | undefined {
  try {
    const url = new URL(value);
    if (url.protocol !== "http:" && url.protocol !== "https:") return undefined;
    const port = url.port || (url.protocol === "https:" ? "443" : "80");
    const host =
      url.hostname.includes(":") && !url.hostname.startsWith("[") ? `[${url.hostname}]` : url.hostname;
    return `${host}:${port}`;
  } catch {
    return undefined;
  }
}
