import { closeSync, constants, openSync, readlinkSync } from "node:fs";
import type { OpenFile } from "./open-file.js";
import { AgentdError } from "../../errors/agentd-error.js";

// The lookups and checks here are synchronous, as confinePath's realpath is: single metadata
// system calls that cannot block on a FIFO or a device (nothing is opened for reading here), at a
// tenth of the cost of a round trip through libuv's thread pool. File content moves asynchronously.

/** Where the kernel shows this process's open descriptors (Linux). */
const DESCRIPTORS = "/proc/self/fd";

/**
 * A folder held open by descriptor. Names are looked up inside it through
 * `/proc/self/fd/<fd>/<name>`: the kernel starts from the folder the descriptor holds, whatever
 * happened to the path that led there, so a name swapped for a symlink higher up changes nothing.
 * Counted: a walk keeps a folder open while children of it still wait to be opened.
 */
export class HeldDirectory {
  readonly fd: number;
  /** Where the folder really is, read back from its descriptor. */
  readonly realPath: string;
  /** Relative to the workdir, `/`-separated; `.` for the workdir itself. */
  readonly relative: string;
  readonly #close: () => unknown;
  #holders = 1;

  constructor(fd: number, realPath: string, relative: string, close: () => unknown = () => closeSync(fd)) {
    this.fd = fd;
    this.realPath = realPath;
    this.relative = relative;
    this.#close = close;
  }

  /** A folder opened by openBeneath, closed through its OpenFile. */
  static ofHandle(handle: OpenFile, realPath: string, relative: string): HeldDirectory {
    return new HeldDirectory(handle.fd, realPath, relative, () => handle.close());
  }

  /** The path that names `name` inside this folder (and only there); `name` has no `/`. */
  entryPath(name: string): string {
    return `${DESCRIPTORS}/${this.fd}/${name}`;
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
    if (this.#holders === 0) await this.#close();
  }
}

/** A folder opened inside another, or the target of the symlink found under its name instead. */
export type FolderOpening = { folder: HeldDirectory } | { link: string };

/**
 * Opens the folder `name` inside `parent` without following a symlink: a symlink under that name
 * comes back as its target, for the caller to resolve inside the workdir. Fails as open(2) does
 * (ENOENT, ENOTDIR for a file).
 */
export function openFolderIn(parent: HeldDirectory, name: string): FolderOpening {
  const entry = parent.entryPath(name);
  let fd: number;
  try {
    fd = openSync(entry, constants.O_RDONLY | constants.O_DIRECTORY | constants.O_NOFOLLOW);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    // O_NOFOLLOW | O_DIRECTORY on a symlink fails with ENOTDIR (or ELOOP): tell it from a file.
    if (code === "ENOTDIR" || code === "ELOOP") {
      const link = linkTargetOf(entry);
      if (link !== undefined) return { link };
    }
    throw error;
  }
  try {
    return { folder: new HeldDirectory(fd, realPathOf(fd), parent.relativeOf(name)) };
  } catch (error) {
    closeSync(fd);
    throw error;
  }
}

/** The target of the symlink at `entry` (a path whose last name is not followed); undefined if none. */
export function linkTargetOf(entry: string): string | undefined {
  try {
    return readlinkSync(entry);
  } catch {
    // Not a symlink (EINVAL), or gone meanwhile.
    return undefined;
  }
}

/**
 * Where an open descriptor's file really is, as the kernel names it. A file removed meanwhile reads
 * back with " (deleted)" appended: callers refuse it by its link count (fstat), not by its name.
 * Refuses, rather than fall back to opening by name, where /proc/self/fd is missing (not Linux,
 * /proc not mounted): then names cannot be resolved inside a held folder either.
 */
export function realPathOf(fd: number): string {
  try {
    return readlinkSync(`${DESCRIPTORS}/${fd}`);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw error;
    throw new AgentdError("TOOL_FAILED", "the file tools need /proc/self/fd, which this system lacks", {
      hint: "run agentd on Linux with /proc mounted: elsewhere the file tools cannot be confined safely",
      cause: error,
    });
  }
}
