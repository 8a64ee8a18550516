import { randomBytes } from "node:crypto";
import { mkdir, open, rename, rm } from "node:fs/promises";
import path from "node:path";

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
