import { constants } from "node:fs";
import { type FileHandle, open, readlink } from "node:fs/promises";
import { AgentdError } from "../../errors/agentd-error.js";

/** Where the kernel shows this process's open descriptors (Linux). */
const DESCRIPTORS = "/proc/self/fd";

/**
 * A folder held open by descriptor. Names are looked up inside it through
 * `/proc/self/fd/<fd>/<name>`: the kernel starts from the folder the descriptor holds, whatever
 * happened to the path that led there, so a name swapped for a symlink higher up changes nothing.
 * Counted: a walk keeps a folder open while children of it still wait to be opened.
 */
export class HeldDirectory {
  readonly handle: FileHandle;
  /** Where the folder really is, read back from its descriptor. */
  readonly realPath: string;
  /** Relative to the workdir, `/`-separated; `.` for the workdir itself. */
  readonly relative: string;
  #holders = 1;

  constructor(handle: FileHandle, realPath: string, relative: string) {
    this.handle = handle;
    this.realPath = realPath;
    this.relative = relative;
  }

  /** The path that names `name` inside this folder (and only there); `name` has no `/`. */
  entryPath(name: string): string {
    return `${DESCRIPTORS}/${this.handle.fd}/${name}`;
  }

  /** The relative path of `name` inside this folder. */
  relativeOf(name: string): string {
    return this.relative === "." ? name : `${this.relative}/${name}`;
  }

  /** One more holder: the descriptor stays open until every holder released it. */
  retain(): this {
    this.#holders += 1;
    return this;
  }

  async release(): Promise<void> {
    this.#holders -= 1;
    if (this.#holders === 0) await this.handle.close();
  }
}

/** A folder opened inside another, or the target of the symlink found under its name instead. */
export type FolderOpening = { folder: HeldDirectory } | { link: string };

/**
 * Opens the folder `name` inside `parent` without following a symlink: a symlink under that name
 * comes back as its target, for the caller to resolve inside the workdir. Fails as open(2) does
 * (ENOENT, ENOTDIR for a file).
 */
export async function openFolderIn(parent: HeldDirectory, name: string): Promise<FolderOpening> {
  const entry = parent.entryPath(name);
  let handle: FileHandle;
  try {
    handle = await open(entry, constants.O_RDONLY | constants.O_DIRECTORY | constants.O_NOFOLLOW);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    // O_NOFOLLOW | O_DIRECTORY on a symlink fails with ENOTDIR (or ELOOP): tell it from a file.
    if (code === "ENOTDIR" || code === "ELOOP") {
      const link = await linkTargetOf(entry);
      if (link !== undefined) return { link };
    }
    throw error;
  }
  try {
    return { folder: new HeldDirectory(handle, await realPathOf(handle), parent.relativeOf(name)) };
  } catch (error) {
    await handle.close();
    throw error;
  }
}

/** The target of the symlink at `entry` (a path whose last name is not followed); undefined if none. */
export async function linkTargetOf(entry: string): Promise<string | undefined> {
  try {
    return await readlink(entry);
  } catch {
    // Not a symlink (EINVAL), or gone meanwhile.
    return undefined;
  }
}

/**
 * Where an open descriptor's file really is, as the kernel names it. A file removed meanwhile reads
 * back with " (deleted)" appended: callers refuse it by its link count (fstat), not by its name.
 */
export async function realPathOf(handle: FileHandle): Promise<string> {
  try {
    return await readlink(`${DESCRIPTORS}/${handle.fd}`);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw error;
    throw new AgentdError("TOOL_FAILED", "the file tools need /proc/self/fd, which this system lacks", {
      hint: "run agentd on Linux with /proc mounted: elsewhere the file tools cannot be confined safely",
      cause: error,
    });
  }
}
