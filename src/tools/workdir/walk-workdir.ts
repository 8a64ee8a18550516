import type { Dirent } from "node:fs";
import { readdir } from "node:fs/promises";
import path from "node:path";
import { isWithin } from "../../util/path-within.js";
import { HeldDirectory, openFolderIn } from "./held-directory.js";
import type { HeldWorkdir } from "./held-workdir.js";
import { openBeneath } from "./open-beneath.js";

/** One entry met while walking a folder inside the workdir. */
export interface WalkEntry {
  /** Relative to the workdir, `/`-separated. */
  relative: string;
  kind: "file" | "directory" | "symlink" | "other";
  /** Its name in `folder`. */
  name: string;
  /** The folder it was listed from, held open while the entry is handed out (open through it). */
  folder: HeldDirectory;
}

/** Folders listed but never entered by a recursive walk: large, and rarely what a task is about. */
export const SKIPPED_FOLDERS = new Set([".git", "node_modules"]);

export interface WalkOptions {
  recursive: boolean;
  signal: AbortSignal;
  /**
   * False for a path (relative to the workdir) a permission rule keeps out of walks: such an
   * entry is not yielded, and such a folder is not entered.
   */
  allowed(relativePath: string): boolean;
}

/** A sub-folder waiting to be entered: opened through its parent, held until then. */
interface PendingFolder {
  parent: HeldDirectory;
  name: string;
}

/**
 * Yields the entries under `start` (a folder of the workdir, held; the caller releases it), sorted
 * by name, folders before their content. Folders are listed and entered through held descriptors,
 * never by path, so a name swapped for a symlink meanwhile leads nowhere. Symlinks are never
 * followed: one whose target stays inside the workdir is yielded as a symlink, one that leaves it
 * (or dangles) is skipped. Entries the agent's sandbox hides, and those `allowed` refuses, are
 * skipped, folders with all their content.
 */
export async function* walkWorkdir(
  workdir: HeldWorkdir,
  start: HeldDirectory,
  options: WalkOptions,
): AsyncGenerator<WalkEntry> {
  const pending: (HeldDirectory | PendingFolder)[] = [start.retain()];
  try {
    while (pending.length > 0) {
      options.signal.throwIfAborted();
      const folder = await enter(workdir, pending.shift() as HeldDirectory | PendingFolder);
      if (folder === undefined) continue;
      const subfolders: PendingFolder[] = [];
      try {
        for (const entry of await listed(folder)) {
          const relative = folder.relativeOf(entry.name);
          const kind = kindOf(entry);
          if (!workdir.access.shows(path.join(folder.realPath, entry.name))) continue;
          if (kind === "symlink" && !(await staysInside(workdir, relative))) continue;
          if (!isAllowed(relative, kind, options)) continue;
          yield { relative, kind, name: entry.name, folder };
          if (kind === "directory" && options.recursive && !SKIPPED_FOLDERS.has(entry.name)) {
            subfolders.push({ parent: folder.retain(), name: entry.name });
          }
        }
      } finally {
        pending.unshift(...subfolders);
        await folder.release();
      }
    }
  } finally {
    for (const item of pending) await (item instanceof HeldDirectory ? item : item.parent).release();
  }
}

/**
 * Opens a pending sub-folder through its parent, without following a symlink put in its place;
 * undefined (skipped) when it is no longer a folder inside the workdir the sandbox shows.
 */
async function enter(
  workdir: HeldWorkdir,
  item: HeldDirectory | PendingFolder,
): Promise<HeldDirectory | undefined> {
  if (item instanceof HeldDirectory) return item;
  let opened: ReturnType<typeof openFolderIn> | undefined;
  try {
    opened = openFolderIn(item.parent, item.name);
  } catch {
    // Removed or unreadable meanwhile: list what can be read.
  } finally {
    await item.parent.release();
  }
  if (opened === undefined || "link" in opened) return undefined;
  const { folder } = opened;
  if (isWithin(folder.realPath, workdir.realPath) && workdir.access.shows(folder.realPath)) return folder;
  await folder.release();
  return undefined;
}

async function listed(folder: HeldDirectory): Promise<Dirent[]> {
  try {
    const entries = await readdir(folder.entryPath("."), { withFileTypes: true });
    return entries.sort((first, second) => first.name.localeCompare(second.name));
  } catch {
    // Unreadable (permissions, removed meanwhile): list what can be read.
    return [];
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

/** Whether the symlink at `relative` resolves, inside the workdir, to something the sandbox shows. */
async function staysInside(workdir: HeldWorkdir, relative: string): Promise<boolean> {
  try {
    const opened = await openBeneath(workdir, relative, { kind: "read" });
    await opened.handle.close();
    return true;
  } catch {
    // Dangling, looping, leaving the workdir or hidden: nothing to show, and nothing to follow.
    return false;
  }
}
