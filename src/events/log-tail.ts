import { closeSync, fstatSync, ftruncateSync, openSync, readSync } from "node:fs";

const CHUNK_BYTES = 64 * 1024;
const NEWLINE = 0x0a;

/** The end of a JSONL log: its last complete lines, and how many bytes of a torn line were cut. */
export interface LogTail {
  lines: string[];
  /** Bytes after the last newline (a line torn by a crash), removed from the file. */
  truncatedBytes: number;
}

/**
 * Reads only the end of a JSONL file: its last `count` complete lines. A last line without its
 * newline was torn by a crash mid-write: it is cut off the file, so the next append starts clean.
 */
export function readLogTail(file: string, count: number): LogTail {
  const descriptor = openSync(file, "r+");
  try {
    const size = fstatSync(descriptor).size;
    const chunks: Buffer[] = [];
    let position = size;
    let newlines = 0;
    // One newline more than needed: the segment before it may be a partial line.
    while (position > 0 && newlines <= count) {
      const length = Math.min(CHUNK_BYTES, position);
      position -= length;
      const chunk = Buffer.allocUnsafe(length);
      readSync(descriptor, chunk, 0, length, position);
      for (let index = chunk.indexOf(NEWLINE); index >= 0; index = chunk.indexOf(NEWLINE, index + 1)) {
        newlines++;
      }
      chunks.unshift(chunk);
    }
    const tail = Buffer.concat(chunks);
    const lastNewline = tail.lastIndexOf(NEWLINE);
    const truncatedBytes = tail.length - (lastNewline + 1);
    if (truncatedBytes > 0) ftruncateSync(descriptor, size - truncatedBytes);
    if (lastNewline < 0) return { lines: [], truncatedBytes };
    // Decode from a line start: a newline byte never sits inside a multi-byte character.
    const firstLine = position === 0 ? 0 : tail.indexOf(NEWLINE) + 1;
    if (count === 0 || firstLine >= lastNewline) return { lines: [], truncatedBytes };
    const text = tail.toString("utf8", firstLine, lastNewline);
    return { lines: text.split("\n").slice(-count), truncatedBytes };
  } finally {
    closeSync(descriptor);
  }
}

/** Cuts a torn last line off a JSONL file (no-op when the file ends with a newline or is empty). */
export function repairTornTail(file: string): number {
  return readLogTail(file, 0).truncatedBytes;
}
