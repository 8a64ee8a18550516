import { closeSync, fsyncSync, mkdirSync, openSync, renameSync, writeSync } from "node:fs";
import path from "node:path";

/**
 * Replaces `file` with `text` so that a crash at any point leaves either the old or the new
 * content, never a torn file: write a temp file beside it, fsync it, then rename over the target.
 */
export function writeFileAtomically(file: string, text: string): void {
  mkdirSync(path.dirname(file), { recursive: true });
  const temporary = `${file}.${process.pid}.tmp`;
  const descriptor = openSync(temporary, "w", 0o600);
  try {
    writeSync(descriptor, text);
    fsyncSync(descriptor);
  } finally {
    closeSync(descriptor);
  }
  renameSync(temporary, file);
}

/** Appends one line and fsyncs it: an append-only log that survives kill -9 up to its last line. */
export function appendLineDurably(file: string, line: string): void {
  mkdirSync(path.dirname(file), { recursive: true });
  const descriptor = openSync(file, "a", 0o600);
  try {
    writeSync(descriptor, `${line}\n`);
    fsyncSync(descriptor);
  } finally {
    closeSync(descriptor);
  }
}
