import type { Dirent } from "node:fs";
import { readdir, realpath } from "node:fs/promises";
import path from "node:path";
import { isInside, relativeTo } from "./confine-path.js";

/** One entry met while walking a folder inside the workdir. */
export interface WalkEntry {
  /** Where it is (a symlink's own location, not its target). */
  absolute: string;
  /** Relative to the workdir, `/`-separated. */
  relative: string;
  kind: "file" | "directory" | "symlink" | "other";
}

/** Folders listed but never entered by a recursive walk: large, and rarely what a task is about. */
export const SKIPPED_FOLDERS = new Set([".git", "node_modules"]);

export interface WalkOptions {
  /** The workdir's real location. */
  root: string;
  recursive: boolean;
  signal: AbortSignal;
  /**
   * False for a path (relative to the workdir) a permission rule keeps out of walks: such an
   * entry is not yielded, and such a folder is not entered.
   */
  allowed(relativePath: string): boolean;
}

/**
 * Yields the entries under `start` (a real folder inside the workdir), sorted by name, folders
 * before their content. Symlinks are never followed: one whose target stays inside the workdir is
 * yielded as a symlink, one that leaves it (or dangles outside) is skipped. Entries `allowed`
 * refuses are skipped, folders with all their content.
 */
export async function* walkWorkdir(start: string, options: WalkOptions): AsyncGenerator<WalkEntry> {
  const pending = [start];
  while (pending.length > 0) {
    options.signal.throwIfAborted();
    const folder = pending.shift() as string;
    let entries: Dirent[];
    try {
      entries = await readdir(folder, { withFileTypes: true });
    } catch {
      // Unreadable (permissions, removed meanwhile): list what can be read.
      continue;
    }
    entries.sort((first, second) => first.name.localeCompare(second.name));
    const subfolders: string[] = [];
    for (const entry of entries) {
      const absolute = path.join(folder, entry.name);
      const kind = kindOf(entry);
      if (kind === "symlink" && !(await staysInside(options.root, absolute))) continue;
      const relative = relativeTo(options.root, absolute);
      if (!isAllowed(relative, kind, options)) continue;
      yield { absolute, relative, kind };
      if (kind === "directory" && options.recursive && !SKIPPED_FOLDERS.has(entry.name)) {
        subfolders.push(absolute);
      }
    }
    pending.unshift(...subfolders);
  }
}

/** A folder is checked as `dir` and as `dir/`, so both `tool(dir)` and `tool(dir/*)` rules keep it out. */
function isAllowed(relative: string, kind: WalkEntry["kind"], options: WalkOptions): boolean {
  if (!options.allowed(relative)) return false;
  return kind !== "directory" || options.allowed(`${relative}/`);
}

function kindOf(entry: Dirent): WalkEntry["kind"] {
  if (entry.isSymbolicLink()) return "symlink";
  if (entry.isDirectory()) return "directory";
  if (entry.isFile()) return "file";
  return "other";
}

async function staysInside(root: string, link: string): Promise<boolean> {
  try {
    return isInside(root, await realpath(link));
  } catch {
    // Dangling or looping: nothing to show, and nothing to follow.
    return false;
  }
}
