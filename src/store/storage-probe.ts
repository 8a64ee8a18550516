import { rm, writeFile } from "node:fs/promises";
import path from "node:path";

/**
 * Room a probe asks for: a store with less than this left is still full (a few bytes freed would
 * let the next event through and fail the one after).
 */
const PROBE_BYTES = 64 * 1024;

/**
 * A write into `directory` and its removal: resolves when `directory` takes `PROBE_BYTES` again,
 * or `bytes` when more (the write that failed must fit too), rejects with the write's error
 * (ENOSPC, EROFS, …) otherwise.
 */
export async function probeFolder(directory: string, bytes = 0): Promise<void> {
  const file = path.join(directory, `.storage-probe-${process.pid}`);
  try {
    await writeFile(file, Buffer.alloc(Math.max(PROBE_BYTES, bytes)), { mode: 0o600 });
  } finally {
    await rm(file, { force: true });
  }
}
