import { Buffer } from "node:buffer";
import { statSync } from "node:fs";
import path from "node:path";
import { readPlantedFileSync } from "../util/read-planted-file.js";

/**
 * A repository's config bigger than this is not read, nor its includes past this many bytes in all
 * (a hand-written one is a few KiB).
 */
const MAX_CONFIG_BYTES = 256 * 1024;

/**
 * At most this many paths are taken from one config. Each becomes a bind of every sandbox of the
 * folder, and the sandbox's layers cost (on the daemon's event loop) about the square of their
 * number: a config an agent wrote in a repository it made (thousands of `include.path` lines)
 * took seconds of the daemon's time per tool call. A hand-written config names a few.
 */
export const MAX_NAMED_PATHS = 16;

/**
 * At most this many paths named in the configs are looked for (a `stat` each, existing or not): a
 * hand-written config names a few, some of them missing on this machine (`includeIf` files in
 * another checkout), and only existing ones count towards MAX_NAMED_PATHS.
 */
const MAX_LOOKED_FOR = 256;

/** Included configs are read this many includes deep (git's own limit is 10). */
const MAX_INCLUDE_DEPTH = 10;

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
 * as `.git/hooks` would, and every `include.path` / `includeIf.*.path` file, and what those
 * included files name in turn (a project's shared `.gitconfig` that sets `core.hooksPath`), as git
 * reads them. The config itself is read-only in a sandbox, but what it names inside the workdir
 * would otherwise be writable, and git runs it outside any sandbox. Only existing paths are
 * returned (a missing one cannot be bound): the first MAX_NAMED_PATHS that exist of the first
 * MAX_LOOKED_FOR named, each at most MAX_NAMED_DEPTH folders deep in `folder`.
 */
export function gitConfigNamedPaths(folder: string): string[] {
  const found = new Set<string>();
  let lookedFor = 0;
  // The configs to read (the repository's, then its includes level by level), each with its depth.
  const pending = [{ file: path.join(folder, ".git", "config"), depth: 0 }];
  const queued = new Set([pending[0]?.file]);
  // The bytes all of them may hold together: what one config may, not that for each include.
  let unread = MAX_CONFIG_BYTES;
  for (let next = pending.shift(); next !== undefined; next = pending.shift()) {
    const text = configText(next.file, unread);
    if (text === undefined) continue;
    unread -= Buffer.byteLength(text);
    for (const { section, key, value } of configEntries(text)) {
      if (found.size >= MAX_NAMED_PATHS || lookedFor >= MAX_LOOKED_FOR) return [...found];
      const include = (section === "include" || section === "includeif") && key === "path";
      if (!include && !(section === "core" && key === "hookspath")) continue;
      // A hooks folder is relative to the working tree; an include to the config naming it.
      const named = resolvedPath(value, include ? path.dirname(next.file) : folder);
      lookedFor += 1;
      if (!exists(named)) continue;
      found.add(shallowEnough(named, folder));
      if (include && next.depth < MAX_INCLUDE_DEPTH && !queued.has(named)) {
        queued.add(named);
        pending.push({ file: named, depth: next.depth + 1 });
      }
    }
  }
  return [...found];
}

function exists(entry: string): boolean {
  try {
    statSync(entry);
    return true;
  } catch {
    return false;
  }
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
function configText(file: string, maxBytes: number): string | undefined {
  return readPlantedFileSync(file, maxBytes);
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
 * paths: `[section "sub"]` and `[section.sub]` headers, `#` and `;` comments, double quotes, a
 * value continued on the next line after a backslash.
 */
function* configEntries(text: string): Generator<ConfigEntry> {
  let section = "";
  const lines = text.split("\n");
  for (let index = 0; index < lines.length; index++) {
    let line = (lines[index] as string).trim();
    const header = /^\[\s*([A-Za-z0-9.-]+)/.exec(line);
    if (header !== null) {
      section = (header[1] as string).split(".")[0]?.toLowerCase() ?? "";
      const after = line.indexOf("]");
      if (after === -1) continue;
      line = line.slice(after + 1).trim();
    }
    // `path = a\` then `b`: one value.
    while (/^[A-Za-z][A-Za-z0-9-]*\s*=/.test(line) && endsInBackslash(line) && index + 1 < lines.length)
      line = line.slice(0, -1) + (lines[++index] as string).replace(/\r$/, "");
    const entry = /^([A-Za-z][A-Za-z0-9-]*)\s*=\s*(.*)$/.exec(line);
    if (entry === null) continue;
    yield { section, key: (entry[1] as string).toLowerCase(), value: unquoted(entry[2] as string) };
  }
}

/** Whether the line ends in a backslash that is not itself escaped. */
function endsInBackslash(line: string): boolean {
  let count = 0;
  while (count < line.length && line[line.length - 1 - count] === "\\") count++;
  return count % 2 === 1;
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
