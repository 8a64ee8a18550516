import { type Stats, constants, fstatSync } from "node:fs";
import { open } from "node:fs/promises";
import { AgentdError } from "../../errors/agentd-error.js";
import { isWithin } from "../../util/path-within.js";
import { relativeTo } from "./confine-path.js";
import { requireAccess } from "./file-access.js";
import { type HeldDirectory, realPathOf } from "./held-directory.js";
import type { HeldWorkdir } from "./held-workdir.js";
import type { OpenFile } from "./open-file.js";

/** Read: anything (the caller refuses what it cannot use). Write: a regular file, created if missing. */
export type OpenIntent = { kind: "read" } | { kind: "write"; append: boolean };

/** A file or folder opened inside the workdir and checked after opening. */
export interface OpenedEntry {
  handle: OpenFile;
  /** fstat of the open descriptor. */
  info: Stats;
  /** Where it really is, read back from the descriptor. */
  realPath: string;
  /** Relative to the workdir's real location, `/`-separated; `.` for the workdir itself. */
  relative: string;
  /** True when this call created the file. */
  created: boolean;
}

/** Opening for reading: never through a symlink, never blocking on a FIFO, never a terminal. */
export const READ_FLAGS =
  constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK | constants.O_NOCTTY;

/**
 * Opens the file `name` of a folder met by a walk, for reading, without following a symlink.
 * Undefined when it is no longer a regular file inside the workdir (swapped or removed meanwhile),
 * or the sandbox hides it.
 */
export async function openWalkedFile(
  workdir: HeldWorkdir,
  folder: HeldDirectory,
  name: string,
): Promise<OpenedEntry | undefined> {
  try {
    const handle = await open(folder.entryPath(name), READ_FLAGS);
    const opened = await checkedEntry(workdir, handle, { kind: "read" }, false, folder.relativeOf(name));
    if (opened.info.isFile()) return opened;
    await opened.handle.close();
  } catch {
    // Gone, a symlink now (ELOOP), or refused: a walk skips it.
  }
  return undefined;
}

/**
 * The checks on the open descriptor, which no later swap can change: it is still linked, really
 * inside the workdir, and the sandbox lets the agent read (write) it. A file with other hard links
 * is not written: another of its names may lie outside the workdir. Closes it when refused.
 */
export async function checkedEntry<Handle extends OpenFile>(
  workdir: HeldWorkdir,
  handle: Handle,
  intent: OpenIntent,
  created: boolean,
  requested: string,
): Promise<OpenedEntry & { handle: Handle }> {
  try {
    const info = fstatSync(handle.fd);
    const realPath = realPathOf(handle.fd);
    if (info.nlink === 0) {
      throw new AgentdError("TOOL_FAILED", `"${requested}" was removed while it was opened`, {
        hint: "try again",
      });
    }
    if (!isWithin(realPath, workdir.realPath)) {
      throw new AgentdError("PATH_ESCAPE", `path "${requested}" leads outside the working directory`, {
        hint: `use a path inside ${workdir.realPath}`,
        details: { path: requested },
      });
    }
    const relative = relativeTo(workdir.realPath, realPath);
    requireAccess(workdir.access, realPath, intent.kind, relative);
    if (intent.kind === "write" && info.isFile() && info.nlink > 1 && !created) {
      throw new AgentdError(
        "TOOL_DENIED",
        `"${relative}" has other hard links; write_file does not write it`,
        {
          hint: "another name of the same file may lie outside the working directory; write a new file instead",
        },
      );
    }
    return { handle, info, realPath, relative, created };
  } catch (error) {
    await handle.close();
    throw error;
  }
}
