import {
  type Dir,
  existsSync,
  lstatSync,
  mkdirSync,
  opendirSync,
  readdirSync,
  statSync,
  writeFileSync,
} from "node:fs";
import path from "node:path";
import { gitConfigNamedPaths } from "./git-config-paths.js";

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
  // Mercurial runs its repository's hgrc at every command (`[hooks] pre-status`, `[extensions]`
  // loading a Python file); `requires` decides whether it reads another repository's instead
  // (`shared` with a `sharedpath` the agent wrote). Sapling, Mercurial's descendant, the same. Jujutsu's repository config sets its pager and
  // diff tools, which `jj log` runs.
  ".hg/hgrc",
  // Read at every command after hgrc, shared or not; `sharedpath` names the repository whose hgrc a
  // share (its `requires` saying `shared`) reads too.
  ".hg/hgrc-not-shared",
  ".hg/requires",
  ".hg/sharedpath",
  ".sl/config",
  ".sl/requires",
  ".sl/sharedpath",
  ".jj/repo/config.toml",
  // A workspace's own config (jj 0.31 to 0.37; later ones move both into the user's config folder
  // at the first command, so a planted one still takes effect).
  ".jj/workspace-config.toml",
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
  ".gemini/commands",
  ".gemini/extensions",
  ".gemini/policies",
  ".codex/config.toml",
  ".codex/rules",
  ".vscode/mcp.json",
  ".vscode/launch.json",
  ".cursor/mcp.json",
  ".devcontainer/devcontainer.json",
  ".devcontainer.json",
  "opencode.json",
  "opencode.jsonc",
  // Other coding agents' and editors' project files that start servers or run commands when the
  // person next opens the project with them: Qwen Code (Gemini CLI's fork), Roo Code, Kiro, Amazon
  // Q, Crush (MCP servers), Aider (its lint and test commands run after each edit), Zed (language
  // servers' binaries, context servers, tasks).
  ".qwen/settings.json",
  ".qwen/commands",
  ".qwen/extensions",
  ".roo/mcp.json",
  ".kiro/settings/mcp.json",
  ".amazonq/mcp.json",
  // Amazon Q CLI's project agents (their hooks run commands, their MCP servers start), taking the
  // place of the person's own agent of the same name.
  ".amazonq/cli-agents",
  ".crush.json",
  "crush.json",
  ".aider.conf.yml",
  ".zed/settings.json",
  ".zed/tasks.json",
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

/** Entries of a writable folder listed before its candidates are looked up one by one instead. */
const MAX_LISTED_NAMES = 256;

/**
 * A folder whose entries take at most this much room (its size, as `stat` gives it) is read in one
 * call: a few hundred names at most on ext4, xfs, btrfs or tmpfs, whose folders grow with their
 * entries. A bigger one is read a batch at a time, up to MAX_LISTED_NAMES.
 */
const SMALL_FOLDER_BYTES = 64 * 1024;

/**
 * The same, for a CLI's own config folder bound writable (its name decides which it is): what it
 * runs, and the user's own instructions every session of that CLI reads (Claude Code's
 * `CLAUDE.md`, Codex's `AGENTS.md`), where a planted line would steer the user's next interactive
 * session. Gemini's `GEMINI.md` stays writable: its memory tool writes there.
 */
const EXECUTED_IN_CLI_FOLDER: Record<string, string[]> = {
  ".claude": [
    "CLAUDE.md",
    "settings.json",
    "settings.local.json",
    "commands",
    "agents",
    "hooks",
    "skills",
    "plugins",
    "output-styles",
  ],
  ".gemini": ["settings.json", "commands", "extensions", "policies"],
  ".codex": ["AGENTS.md", "AGENTS.override.md", "config.toml", "rules"],
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
 * name that does not exist yet; git's hooks folder is created when `.git` exists without one, and
 * an empty `.hg/hgrc` (`.sl/config`) when a Mercurial (Sapling) repository has none.
 *
 * Runs for every tool call (a policy is made per call): the folder is listed once and only the
 * names whose first component it holds are looked up, instead of some forty lookups of names that
 * are almost all missing. Names are compared without case, so a folder on a case-insensitive
 * filesystem (where `.BashRC` is `.bashrc`) still has each candidate looked up; a folder that
 * cannot be listed has every candidate looked up, as before.
 */
export function hostExecutedPaths(writableFolders: readonly string[]): string[] {
  const found: string[] = [];
  for (const folder of new Set(writableFolders)) {
    const present = lowerCaseNamesIn(folder);
    const mayHold = (name: string) =>
      present === undefined || present.has(firstComponent(name).toLowerCase());
    const hooks = path.join(folder, ".git", "hooks");
    if (mayHold(".git") && existsSync(path.join(folder, ".git", "HEAD")) && !existsSync(hooks)) {
      try {
        mkdirSync(hooks);
      } catch {
        // Not creatable here: then nothing sandboxed can create it either.
      }
    }
    // A Mercurial or Sapling repository without its configs (as `hg init` leaves it) gets empty
    // ones, bound read-only below like git's hooks folder: a missing one could be created with hooks
    // in it. Only in a real folder holding `requires`, never through a link an agent made.
    for (const [repository, config] of MERCURIAL_CONFIGS) {
      const file = path.join(folder, repository, config);
      if (!mayHold(repository) || !isMercurialFolder(path.join(folder, repository)) || existsSync(file))
        continue;
      try {
        writeFileSync(file, "", { flag: "wx" });
      } catch {
        // Not creatable here: then nothing sandboxed can create it either.
      }
    }
    // What the repository's read-only config names in the folder: its hooksPath, included files.
    if (mayHold(".git")) found.push(...gitConfigNamedPaths(folder));
    // A worktree's or submodule's `.git` is a file naming the git folder: rewritten, it would point
    // git at a config the agent wrote (core.fsmonitor runs at the next `git status`).
    if (mayHold(".git") && isFile(path.join(folder, ".git"))) found.push(path.join(folder, ".git"));
    // A Jujutsu workspace's `.jj/repo` file names its repository the same way (and so its config).
    if (mayHold(".jj") && isFile(path.join(folder, ".jj", "repo")))
      found.push(path.join(folder, ".jj", "repo"));
    const names = [...EXECUTED_IN_ANY_FOLDER, ...(EXECUTED_IN_CLI_FOLDER[path.basename(folder)] ?? [])];
    for (const name of names) {
      if (!mayHold(name)) continue;
      const candidate = path.join(folder, name);
      if (existsSync(candidate)) found.push(candidate);
    }
  }
  return found;
}

/**
 * The names in a folder, lower-cased; undefined when it cannot be listed or holds more than
 * MAX_LISTED_NAMES entries (listing a big folder would cost more than the lookups it saves): then
 * nothing is ruled out. A small folder (the usual workdir) is read with one `readdir`: a `Dir`
 * costs more to make than the lookups it spares (Node wraps its methods anew for each one), and
 * this runs on every tool call.
 */
function lowerCaseNamesIn(folder: string): Set<string> | undefined {
  let size: number | undefined;
  try {
    size = statSync(folder, { throwIfNoEntry: false })?.size;
  } catch {
    return undefined;
  }
  if (size === undefined) return undefined;
  if (size > SMALL_FOLDER_BYTES) return namesReadInBatches(folder);
  try {
    const names = new Set<string>();
    for (const name of readdirSync(folder)) {
      if (names.size >= MAX_LISTED_NAMES) return undefined;
      names.add(name.toLowerCase());
    }
    return names;
  } catch {
    return undefined;
  }
}

/** lowerCaseNamesIn for a big folder: read a batch at a time, given up past MAX_LISTED_NAMES. */
function namesReadInBatches(folder: string): Set<string> | undefined {
  let directory: Dir | undefined;
  try {
    directory = opendirSync(folder, { bufferSize: 128 });
    const names = new Set<string>();
    for (let entry = directory.readSync(); entry !== null; entry = directory.readSync()) {
      if (names.size >= MAX_LISTED_NAMES) return undefined;
      names.add(entry.name.toLowerCase());
    }
    return names;
  } catch {
    return undefined;
  } finally {
    try {
      directory?.closeSync();
    } catch {
      // Closed either way.
    }
  }
}

/** A Mercurial (or Sapling) repository's folder and the config file in it that runs its hooks. */
const MERCURIAL_CONFIGS = [
  [".hg", "hgrc"],
  [".hg", "hgrc-not-shared"],
  [".sl", "config"],
] as const;

/** A real `.hg` or `.sl` folder (not a link) of a repository: it holds `requires`. */
function isMercurialFolder(folder: string): boolean {
  try {
    return lstatSync(folder).isDirectory() && existsSync(path.join(folder, "requires"));
  } catch {
    return false;
  }
}

function isFile(entry: string): boolean {
  try {
    return statSync(entry).isFile();
  } catch {
    return false;
  }
}

function firstComponent(name: string): string {
  const slash = name.indexOf("/");
  return slash === -1 ? name : name.slice(0, slash);
}
