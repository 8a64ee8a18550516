// One promise, kept by both writers here: whoever reads `file`, even after a crash or kill -9 at any
// point, finds either its old content or the new one, never a torn mix. `replaceFile` keeps it off
// the event loop; `replaceFileSync` keeps it where the caller must not yield (and can take a spare).
import { randomBytes } from "node:crypto";
import fs, { closeSync, fsyncSync, mkdirSync, openSync, renameSync, rmSync, writeSync } from "node:fs";
import { mkdir, open, rm } from "node:fs/promises";
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
  const content = Buffer.from(text, "utf8");
  const sync = options.sync ?? true;
  try {
    await writeTemporary(temporary, content, sync);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw error;
    await mkdir(folder, { recursive: true, mode: 0o700 });
    await writeTemporary(temporary, content, sync);
  }
  try {
    await new Promise<void>((resolve, reject) =>
      fs.rename(temporary, file, (error) => (error ? reject(error) : resolve())),
    );
  } catch (error) {
    await rm(temporary, { force: true });
    throw error;
  }
  if (options.syncFolder) await syncFolder(folder);
}

/**
 * Creates `temporary` (it must not exist), writes `content` whole, flushes it when `sync`, and
 * closes it; on a failure after the creation, removes it. Callbacks on plain descriptors, not
 * FileHandles: the same four trips to libuv's threads cost the event loop a third of the time
 * (a run's launch writes its record this way while its first model request waits for the loop).
 */
function writeTemporary(temporary: string, content: Buffer, sync: boolean): Promise<void> {
  return new Promise((resolve, reject) => {
    fs.open(temporary, "wx", 0o600, (openError, descriptor) => {
      if (openError) return reject(openError);
      const closeThen = (failure: Error | null) =>
        fs.close(descriptor, (closeError) => {
          const error = failure ?? closeError;
          if (!error) return resolve();
          fs.rm(temporary, { force: true }, () => reject(error));
        });
      const flushThen = () => (sync ? fs.fdatasync(descriptor, closeThen) : closeThen(null));
      const writeFrom = (offset: number): void => {
        if (offset >= content.length) return flushThen();
        fs.write(descriptor, content, offset, content.length - offset, null, (writeError, written) => {
          if (writeError) return closeThen(writeError);
          if (written <= 0)
            return closeThen(Object.assign(new Error("the write made no progress"), { code: "EIO" }));
          writeFrom(offset + written);
        });
      };
      writeFrom(0);
    });
  });
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
