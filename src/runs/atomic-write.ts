import { closeSync, fsyncSync, mkdirSync, openSync, renameSync, writeSync } from "node:fs";
import path from "node:path";

export interface WriteOptions {
  /** Flush to the device too, so the write survives a power loss (default true). Without it the write survives kill -9 only. */
  sync?: boolean;
}

/**
 * Replaces `file` with `text` so that a crash at any point leaves either the old or the new
 * content, never a torn file: write a temp file beside it (fsynced unless `sync: false`), then rename it
 * over the target. Once this returns, a kill -9 cannot lose the content: it sits in the kernel.
 */
export function writeFileAtomically(file: string, text: string, options: WriteOptions = {}): void {
  mkdirSync(path.dirname(file), { recursive: true });
  const temporary = `${file}.${process.pid}.tmp`;
  const descriptor = openSync(temporary, "w", 0o600);
  try {
    writeSync(descriptor, text);
    if (options.sync ?? true) fsyncSync(descriptor);
  } finally {
    closeSync(descriptor);
  }
  renameSync(temporary, file);
}

/** Appends one line (fsynced unless `sync: false`): an append-only log that survives kill -9 up to its last line. */
export function appendLine(file: string, line: string, options: WriteOptions = {}): void {
  mkdirSync(path.dirname(file), { recursive: true });
  const descriptor = openSync(file, "a", 0o600);
  try {
    writeSync(descriptor, `${line}\n`);
    if (options.sync ?? true) fsyncSync(descriptor);
  } finally {
    closeSync(descriptor);
  }
}
