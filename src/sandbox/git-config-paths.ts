import { statSync } from "node:fs";
import path from "node:path";
import { readPlantedFileSync } from "../util/read-planted-file.js";

/** A repository's config bigger than this is not read (a hand-written one is a few KiB). */
const MAX_CONFIG_BYTES = 256 * 1024;

/**
 * The files and folders a repository's own `.git/config` in `folder` names for git to run or read
 * as config: its `core.hooksPath` folder (husky sets `.husky`), whose hooks run at the next commit
 * as `.git/hooks` would, and every `include.path` / `includeIf.*.path` file. The config itself is
 * read-only in a sandbox, but what it names inside the workdir would otherwise be writable, and
 * git runs it outside any sandbox. Only existing paths are returned (a missing one cannot be bound).
 */
export function gitConfigNamedPaths(folder: string): string[] {
  const gitFolder = path.join(folder, ".git");
  const text = configText(path.join(gitFolder, "config"));
  if (text === undefined) return [];
  const found: string[] = [];
  for (const { section, key, value } of configEntries(text)) {
    if (section === "core" && key === "hookspath") found.push(resolvedPath(value, folder));
    if ((section === "include" || section === "includeif") && key === "path")
      found.push(resolvedPath(value, gitFolder));
  }
  return found.filter((entry) => {
    try {
      statSync(entry);
      return true;
    } catch {
      return false;
    }
  });
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
