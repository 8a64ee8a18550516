import { existsSync, mkdirSync } from "node:fs";
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
  ".git/commondir",
  ".git/config.worktree",
  ".git/info",
  ".git/worktrees",
  ".git/modules",
  ".npmrc",
  ".yarnrc",
  ".yarnrc.yml",
  ".pnpmfile.cjs",
  "mise.toml",
  ".mise.toml",
  ".tool-versions",
  ".pre-commit-config.yaml",
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

/** What a built-in CLI runs from its config folder, wherever `CLAUDE_CONFIG_DIR` or `CODEX_HOME` puts it. */
export const CLI_EXECUTED_NAMES: Readonly<Record<string, readonly string[]>> = {
  claude: EXECUTED_IN_CLI_FOLDER[".claude"] ?? [],
  gemini: EXECUTED_IN_CLI_FOLDER[".gemini"] ?? [],
  codex: EXECUTED_IN_CLI_FOLDER[".codex"] ?? [],
};

/**
 * The existing host-executed paths inside each writable folder. A missing one cannot be bound
 * read-only (bubblewrap would create it on the host), so a sandboxed process can still create a
 * name that does not exist yet; git's hooks folder is created when `.git` exists without one.
 */
export function hostExecutedPaths(writableFolders: readonly string[]): string[] {
  const found: string[] = [];
  for (const folder of new Set(writableFolders)) {
    const hooks = path.join(folder, ".git", "hooks");
    if (existsSync(path.join(folder, ".git", "HEAD")) && !existsSync(hooks)) {
      try {
        mkdirSync(hooks);
      } catch {
        // Not creatable here: then nothing sandboxed can create it either.
      }
    }
    const names = [...EXECUTED_IN_ANY_FOLDER, ...(EXECUTED_IN_CLI_FOLDER[path.basename(folder)] ?? [])];
    for (const name of names) {
      const candidate = path.join(folder, name);
      if (existsSync(candidate)) found.push(candidate);
    }
  }
  return found;
}
