import { statSync } from "node:fs";
import path from "node:path";
import { readPlantedFileSync } from "../util/read-planted-file.js";

/** A repository's config bigger than this is not read (a hand-written one is a few KiB). */
const MAX_CONFIG_BYTES = 256 * 1024;

/**
 * At most this many paths are taken from one config. Each becomes a bind of every sandbox of the
 * folder, and the sandbox's layers cost (on the daemon's event loop) about the square of their
 * number: a config an agent wrote in a repository it made (thousands of `include.path` lines)
 * took seconds of the daemon's time per tool call. A hand-written config names a few.
 */
export const MAX_NAMED_PATHS = 16;

/**
 * A named path more than this many folders below the repository's folder is protected by its
 * folder at this depth (read-only with all it holds): each folder between the workdir and a
 * protected path is bound once more (so it cannot be renamed), and a path thousands of folders
 * deep would cost thousands of binds.
 */
export const MAX_NAMED_DEPTH = 8;

/**
 * The files and folders a repository's own `.git/config` in `folder` names for git to run or read
 * as config: its `core.hooksPath` folder (husky sets `.husky`), whose hooks run at the next commit
 * as `.git/hooks` would, and every `include.path` / `includeIf.*.path` file. The config itself is
 * read-only in a sandbox, but what it names inside the workdir would otherwise be writable, and
 * git runs it outside any sandbox. Only existing paths are returned (a missing one cannot be bound),
 * the first MAX_NAMED_PATHS the config names, each at most MAX_NAMED_DEPTH folders deep in `folder`.
 */
export function gitConfigNamedPaths(folder: string): string[] {
  const gitFolder = path.join(folder, ".git");
  const text = configText(path.join(gitFolder, "config"));
  if (text === undefined) return [];
  const named: string[] = [];
  for (const { section, key, value } of configEntries(text)) {
    if (named.length >= MAX_NAMED_PATHS) break;
    if (section === "core" && key === "hookspath") named.push(resolvedPath(value, folder));
    if ((section === "include" || section === "includeif") && key === "path")
      named.push(resolvedPath(value, gitFolder));
  }
  const found = named.filter((entry) => {
    try {
      statSync(entry);
      return true;
    } catch {
      return false;
    }
  });
  return [...new Set(found.map((entry) => shallowEnough(entry, folder)))];
}

/** `entry`, or its folder MAX_NAMED_DEPTH levels below `folder` when it lies deeper inside it. */
function shallowEnough(entry: string, folder: string): string {
  const relative = path.relative(folder, entry);
  if (relative.startsWith("..") || path.isAbsolute(relative)) return entry;
  const parts = relative.split(path.sep);
  return parts.length <= MAX_NAMED_DEPTH ? entry : path.join(folder, ...parts.slice(0, MAX_NAMED_DEPTH));
}

/**
 * The config, if it is a regular file of a sane size. A repository an agent made itself has a
 * config no sandbox protects: swapped for a FIFO between a check and a read, it would hold the
 * daemon's event loop, so it is checked on the descriptor it is read from.
 */
function configText(file: string): string | undefined {
  return readPlantedFileSync(file, MAX_CONFIG_BYTES);
}

/** `~/x` from $HOME, an absolute path as is, a relative one from `base` (as git resolves each). */
function resolvedPath(value: string, base: string): string {
  if (value.startsWith("~/")) return path.join(process.env["HOME"] ?? "~", value.slice(2));
  return path.resolve(base, value);
}

interface ConfigEntry {
  /** Lower-cased, without its subsection (`includeif` for `[includeIf "gitdir:…"]`). */
  section: string;
  /** Lower-cased. */
  key: string;
  value: string;
}

/**
 * The `key = value` lines of a git config, with the section each is in. Enough of git's syntax for
 * paths: `[section "sub"]` and `[section.sub]` headers, `#` and `;` comments, double quotes.
 */
function* configEntries(text: string): Generator<ConfigEntry> {
  let section = "";
  for (const rawLine of text.split("\n")) {
    let line = rawLine.trim();
    const header = /^\[\s*([A-Za-z0-9.-]+)/.exec(line);
    if (header !== null) {
      section = (header[1] as string).split(".")[0]?.toLowerCase() ?? "";
      const after = line.indexOf("]");
      if (after === -1) continue;
      line = line.slice(after + 1).trim();
    }
    const entry = /^([A-Za-z][A-Za-z0-9-]*)\s*=\s*(.*)$/.exec(line);
    if (entry === null) continue;
    yield { section, key: (entry[1] as string).toLowerCase(), value: unquoted(entry[2] as string) };
  }
}

/** The value as git reads it: quotes removed, a comment outside quotes cut, `\"` and `\\` kept. */
function unquoted(raw: string): string {
  let value = "";
  let quoted = false;
  for (let index = 0; index < raw.length; index++) {
    const character = raw[index] as string;
    if (character === "\\" && index + 1 < raw.length) {
      value += raw[++index];
    } else if (character === '"') {
      quoted = !quoted;
    } else if (!quoted && (character === "#" || character === ";")) {
      break;
    } else {
      value += character;
    }
  }
  return value.trim();
}
