import { existsSync } from "node:fs";
import path from "node:path";

/**
 * Files in a writable folder that programs outside the sandbox run as code later: git's hooks and
 * config (`core.hooksPath`, `core.fsmonitor`, aliases) run when a person next uses git there, a
 * shell's start-up files when a shell starts, a CLI's settings (hooks, MCP servers, commands) when
 * the person next starts that CLI. A sandboxed process that plants code there has left the sandbox,
 * so they stay read-only in every sandbox wherever a writable bind holds them.
 */
const EXECUTED_IN_ANY_FOLDER = [
  ".git/hooks",
  ".git/config",
  ".gitmodules",
  ".mcp.json",
  ".envrc",
  ".vscode/tasks.json",
  ".vscode/settings.json",
  ".claude/settings.json",
  ".claude/settings.local.json",
  ".claude/commands",
  ".claude/agents",
  ".claude/hooks",
  ".claude/skills",
  ".gemini/settings.json",
  ".bashrc",
  ".bash_profile",
  ".bash_login",
  ".profile",
  ".zshrc",
  ".zprofile",
  ".zshenv",
  ".gitconfig",
  ".config/git/config",
];

/** The same, for a CLI's own config folder bound writable (its name decides which it is). */
const EXECUTED_IN_CLI_FOLDER: Record<string, string[]> = {
  ".claude": [
    "settings.json",
    "settings.local.json",
    "commands",
    "agents",
    "hooks",
    "skills",
    "plugins",
    "output-styles",
  ],
  ".gemini": ["settings.json", "commands", "extensions"],
  ".codex": ["config.toml"],
};

/** The existing host-executed paths inside each writable folder. */
export function hostExecutedPaths(writableFolders: readonly string[]): string[] {
  const found: string[] = [];
  for (const folder of new Set(writableFolders)) {
    const names = [...EXECUTED_IN_ANY_FOLDER, ...(EXECUTED_IN_CLI_FOLDER[path.basename(folder)] ?? [])];
    for (const name of names) {
      const candidate = path.join(folder, name);
      if (existsSync(candidate)) found.push(candidate);
    }
  }
  return found;
}
