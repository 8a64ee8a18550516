import { existsSync, mkdirSync, readdirSync, statSync } from "node:fs";
import path from "node:path";
import type { Config } from "../config/config-schema.js";
import { scriptCandidates } from "./script-candidates.js";

/**
 * The folders whose files define what the daemon runs: every agents folder (foreign ones such as
 * `~/.claude/agents` included) and the presets folder. With `create` (where sandboxes are
 * prepared), a missing one is created empty, so a sandboxed process cannot create it first and
 * fill it: a folder that exists can be bound read-only into every sandbox, a missing path cannot.
 */
export function definitionFolders(
  config: Pick<Config, "agents_dir" | "agents_dirs" | "presets_dir">,
  create = true,
): string[] {
  const folders = [config.agents_dir, ...config.agents_dirs, config.presets_dir];
  for (const folder of folders) {
    if (!create || existsSync(folder)) continue;
    try {
      mkdirSync(folder, { recursive: true });
    } catch {
      // Not creatable (a read-only place): nothing sandboxed can create it either.
    }
  }
  return folders;
}

/**
 * The `.env` files (`.env`, `.env.local`, …) of the given folders: they hold the variables the
 * config's `${VAR}` reads, secrets included.
 */
export function environmentFiles(folders: readonly string[]): string[] {
  const files = new Set<string>();
  for (const folder of new Set(folders)) {
    let names: string[];
    try {
      names = readdirSync(folder);
    } catch {
      continue;
    }
    for (const name of names) {
      if (name === ".env" || name.startsWith(".env.")) files.add(path.join(folder, name));
    }
  }
  return [...files];
}

/**
 * The files a command line names (`./hooks/check.sh`, `bash gate.sh`, `node /opt/mcp/server.js`),
 * resolved against `baseDirectory`, and the folders that hold them: a hook or MCP server command
 * the agent could rewrite would run its code with the hook's say over tool calls, or in another
 * fence. Every word naming an existing file counts (a bare `gate.sh` too); a script that `cd`s
 * somewhere first is followed for a literal `cd <folder>`; keep hook scripts outside any workdir.
 */
export function commandFiles(
  commandLine: readonly string[] | string,
  baseDirectory: string,
  home: string | undefined = process.env["HOME"],
): string[] {
  return existingFiles(commandCandidates(commandLine, baseDirectory, home), baseDirectory);
}

/** The paths the words of a command line may name, as `commandFiles` reads them, not yet checked. */
export function commandCandidates(
  commandLine: readonly string[] | string,
  baseDirectory: string,
  home: string | undefined = process.env["HOME"],
): string[] {
  const words = typeof commandLine === "string" ? commandLine.split(/[\s;&|()]+/) : commandLine;
  const candidates: string[] = [];
  let folderNow = baseDirectory;
  let changingFolder = false;
  for (const word of words) {
    const unquoted = word.replace(/^['"]|['"]$/g, "").replace(/^[^=/]*=/, "");
    if (unquoted === "" || unquoted.startsWith("-")) continue;
    // `cd tools/hooks && sh gate.sh`: later words are read from the folder it moves to.
    if (changingFolder) {
      folderNow = path.resolve(folderNow, unquoted);
      changingFolder = false;
      continue;
    }
    if (unquoted === "cd" || unquoted === "pushd") {
      changingFolder = true;
      continue;
    }
    candidates.push(path.resolve(folderNow, unquoted.replace(/^~(?=\/)/, home ?? "~")));
  }
  // The scripts as the shell reads the line: `$HOME/…`, quotes inside a word (`sh "$HOME/my gate.sh"`),
  // and what Node runs for a name it completes (`node gates/server` runs `gates/server.js`).
  const scripts = scriptCandidates(commandLine, baseDirectory, home === undefined ? {} : { HOME: home });
  candidates.push(...scripts.paths, ...scripts.resolved);
  return candidates;
}

/** The candidates that are files now, each with its folder unless that folder holds the base. */
export function existingFiles(candidates: readonly string[], baseDirectory: string): string[] {
  const files: string[] = [];
  for (const candidate of candidates) {
    try {
      // Without an exception for the usual missing one: a hook's candidates are looked at every call.
      if (statSync(candidate, { throwIfNoEntry: false })?.isFile() !== true) continue;
    } catch {
      continue; // Not a file: an argument that only looks like a path.
    }
    files.push(candidate);
    // The script's own folder too (what it imports or sources), unless that folder holds the
    // base (a script at the root of the workdir would make the whole workdir read-only).
    const folder = path.dirname(candidate);
    if (path.relative(folder, baseDirectory).startsWith("..")) files.push(folder);
  }
  return files;
}

/** A script Node runs, whose bare imports it looks up in the `node_modules` of every folder above it. */
const NODE_SCRIPT = /\.(?:[cm]?[jt]s|[jt]sx)$/;

/**
 * The folders a stdio MCP server's scripts load packages from (and any Python virtual environment
 * one of them lies in: its site-packages are code the interpreter runs). Node looks a bare
 * import up in `node_modules` of the script's folder and of every folder above it, up to `/`, and
 * takes the first it finds, so a package planted or changed in any of them runs inside the
 * server, with its secrets and its network. Each that exists is returned (to be bound read-only);
 * with `create` (where sandboxes are prepared: not `agentd validate`, which changes nothing), for
 * a Node script inside `baseDirectory`, a missing one from the script's parent folder up to
 * `baseDirectory` is first created empty, as a missing path cannot be bound and a sandboxed
 * process could otherwise create it, shadowing the real package or filling in an optional one.
 */
export function moduleFolders(scripts: readonly string[], baseDirectory: string, create = true): string[] {
  const folders = new Set<string>();
  for (const script of scripts) {
    const creating =
      create && NODE_SCRIPT.test(script) && !path.relative(baseDirectory, script).startsWith("..");
    let folder = path.dirname(script);
    for (;;) {
      const modules = path.join(folder, "node_modules");
      // Inside an installed package tree the outer node_modules is read-only already: nothing to make.
      if (
        creating &&
        folder !== path.dirname(script) &&
        !path.relative(baseDirectory, folder).startsWith("..") &&
        !folder.split(path.sep).includes("node_modules") &&
        !existsSync(modules)
      ) {
        try {
          mkdirSync(modules);
        } catch {
          // Not creatable here: then nothing sandboxed can create it either.
        }
      }
      if (isFolder(modules)) folders.add(modules);
      // A Python virtual environment's interpreter (`.venv/bin/python`) loads its site-packages.
      if (existsSync(path.join(folder, "pyvenv.cfg"))) folders.add(folder);
      const parent = path.dirname(folder);
      if (parent === folder) break;
      folder = parent;
    }
  }
  return [...folders];
}

function isFolder(entry: string): boolean {
  try {
    return statSync(entry).isDirectory();
  } catch {
    return false;
  }
}

/**
 * agentd's own code, where it is installed: what the daemon loads on its next start (`npm start`
 * runs `scripts/` and builds `src/` into `dist/`). In the README's layout the project is the
 * checkout, so an agent with `workdir: .` would otherwise rewrite the daemon itself.
 */
export function daemonCodePaths(): string[] {
  // src/sandbox and dist/sandbox (and the bundles in dist/cli) sit two levels below the package.
  const root = path.resolve(import.meta.dirname, "../..");
  const names = [
    "package.json",
    "package-lock.json",
    "bin",
    "dist",
    "src",
    "scripts",
    "vendor",
    "node_modules",
    ".npmrc",
  ];
  return names.map((name) => path.join(root, name)).filter((entry) => existsSync(entry));
}
