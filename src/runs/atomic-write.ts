import { closeSync, fsyncSync, mkdirSync, openSync, renameSync, rmSync, writeSync } from "node:fs";
import path from "node:path";
import type { SpareFiles } from "../util/spare-files.js";

export interface WriteOptions {
  /** Flush to the device too, so the write survives a power loss (default true). Without it the write survives kill -9 only. */
  sync?: boolean;
}

export interface AtomicWriteOptions extends WriteOptions {
  /** Empty files made ahead: the temp file is one of them when one is ready (no file created here). */
  spares?: SpareFiles;
}

/**
 * Replaces `file` with `text` so that a crash at any point leaves either the old or the new
 * content, never a torn file: write a temp file (a spare when one is ready, else one beside the
 * target; fsynced unless `sync: false`), then rename it over the target. Once this returns, a
 * kill -9 cannot lose the content: it sits in the kernel.
 */
export function writeFileAtomically(file: string, text: string, options: AtomicWriteOptions = {}): void {
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

function replaceWith(temporary: string, file: string, text: string, options: WriteOptions): void {
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
