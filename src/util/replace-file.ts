// One promise, kept by both writers here: whoever reads `file`, even after a crash or kill -9 at any
// point, finds either its old content or the new one, never a torn mix. `replaceFile` keeps it off
// the event loop; `replaceFileSync` keeps it where the caller must not yield (and can take a spare).
import { randomBytes } from "node:crypto";
import { closeSync, fsyncSync, mkdirSync, openSync, renameSync, rmSync, writeSync } from "node:fs";
import { mkdir, open, rename, rm } from "node:fs/promises";
import path from "node:path";
import type { SpareFiles } from "./spare-files.js";

export interface ReplaceFileOptions {
  /** Flush the new content to the device before the rename (power-loss safe); default true. */
  sync?: boolean;
  /** Flush the folder too after the rename, so the rename itself survives a power loss; default false. */
  syncFolder?: boolean;
}

/**
 * Replaces `file` with `text` (mode 0600) off the event loop, so that a crash leaves the old or the
 * new content, never a torn file: a temp file of its own beside it (created, written, optionally
 * flushed and closed on libuv's threads), renamed over the target. The folder (0700) is made at the
 * first write into it. Resolves once the content is in the kernel: safe from kill -9. A failed
 * write leaves no temp file.
 */
export async function replaceFile(
  file: string,
  text: string,
  options: ReplaceFileOptions = {},
): Promise<void> {
  const folder = path.dirname(file);
  // Unique: two processes (the daemon and a CLI command) may replace the same file.
  const temporary = `${file}.${process.pid}.${randomBytes(4).toString("hex")}.tmp`;
  let handle;
  try {
    handle = await open(temporary, "wx", 0o600);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw error;
    await mkdir(folder, { recursive: true, mode: 0o700 });
    handle = await open(temporary, "wx", 0o600);
  }
  try {
    try {
      await handle.writeFile(text, "utf8");
      if (options.sync ?? true) await handle.datasync();
    } finally {
      await handle.close();
    }
    await rename(temporary, file);
  } catch (error) {
    await rm(temporary, { force: true });
    throw error;
  }
  if (options.syncFolder) await syncFolder(folder);
}

/** Flushes a folder's entries (a rename in it) to the device; a file system that cannot is let be. */
async function syncFolder(folder: string): Promise<void> {
  const directory = await open(folder, "r").catch(() => undefined);
  if (!directory) return;
  try {
    await directory.sync();
  } catch {
    // Some file systems refuse fsync on a folder; the rename is still in the kernel.
  } finally {
    await directory.close();
  }
}

export interface ReplaceFileSyncOptions {
  /** Flush to the device too, so the write survives a power loss (default true). Without it the write survives kill -9 only. */
  sync?: boolean;
  /** Empty files made ahead: the temp file is one of them when one is ready (no file created here). */
  spares?: SpareFiles;
}

/**
 * Replaces `file` with `text` on the calling thread, with the same promise as `replaceFile`: write a
 * temp file (a spare when one is ready, else one beside the target; fsynced unless `sync: false`),
 * then rename it over the target. Once this returns, a kill -9 cannot lose the content: it sits in
 * the kernel.
 */
export function replaceFileSync(file: string, text: string, options: ReplaceFileSyncOptions = {}): void {
  mkdirSync(path.dirname(file), { recursive: true });
  const spare = options.spares?.take();
  if (spare !== undefined) {
    try {
      replaceWith(spare, file, text, options);
      return;
    } catch (error) {
      rmSync(spare, { force: true });
      // Only a target on another file system than the spares is worth a second try beside it.
      if ((error as NodeJS.ErrnoException).code !== "EXDEV") throw error;
    }
  }
  replaceWith(`${file}.${process.pid}.tmp`, file, text, options);
}

function replaceWith(temporary: string, file: string, text: string, options: ReplaceFileSyncOptions): void {
  const descriptor = openSync(temporary, "w", 0o600);
  try {
    try {
      writeSync(descriptor, text);
      if (options.sync ?? true) fsyncSync(descriptor);
    } finally {
      closeSync(descriptor);
    }
    renameSync(temporary, file);
  } catch (error) {
    // A full disk: the partial temp file would hold on to the room it took.
    rmSync(temporary, { force: true });
    throw error;
  }
}
