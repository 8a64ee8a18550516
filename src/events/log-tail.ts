import { closeSync, fstatSync, ftruncateSync, openSync, readSync, writeSync } from "node:fs";

const CHUNK_BYTES = 64 * 1024;
const NEWLINE = 0x0a;
/** Of a torn last line, this much is kept as text for the caller (the id sits at its start). */
const TORN_TEXT_BYTES = 64 * 1024;

/** The end of a JSONL log: its last complete lines, and what was repaired at its very end. */
export interface LogTail {
  lines: string[];
  /** The byte offset in the file of each of `lines`. */
  offsets: number[];
  /** The line number of the first of `lines` when the tail is the whole file, else undefined. */
  firstLine: number | undefined;
  /** Bytes after the last newline (a line torn by a crash), removed from the file. */
  truncatedBytes: number;
  /** The start of the bytes removed, as text (empty when none were). */
  torn: string;
  /** A last line that was whole JSON and lacked only its newline: the newline was added. */
  ended: boolean;
}

/**
 * Reads only the end of a JSONL file: its last `count` complete lines. A last line without its
 * newline was torn by a crash mid-write (or is a power loss's block of NUL bytes): it is cut off
 * the file, so the next append starts clean — unless it is whole JSON that only lost its newline,
 * which is ended instead. Throws what opening or reading the file throws (a folder, no permission).
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
    let tail = Buffer.concat(chunks);
    let lastNewline = tail.lastIndexOf(NEWLINE);
    const tornBytes = tail.subarray(lastNewline + 1);
    let truncatedBytes = 0;
    let torn = "";
    let ended = false;
    if (tornBytes.length > 0) {
      if (isWholeJson(tornBytes)) {
        writeSync(descriptor, "\n", size);
        tail = Buffer.concat([tail, Buffer.from("\n")]);
        lastNewline = tail.length - 1;
        ended = true;
      } else {
        truncatedBytes = tornBytes.length;
        torn = tornBytes.subarray(0, TORN_TEXT_BYTES).toString("utf8");
        ftruncateSync(descriptor, size - truncatedBytes);
      }
    }
    const repaired = { truncatedBytes, torn, ended };
    // Decode from a line start: a newline byte never sits inside a multi-byte character.
    const firstLine = position === 0 ? 0 : tail.indexOf(NEWLINE) + 1;
    if (lastNewline < 0 || count === 0 || firstLine >= lastNewline + 1) {
      return { lines: [], offsets: [], firstLine: undefined, ...repaired };
    }
    const starts: number[] = [];
    for (let start = firstLine; start <= lastNewline; start = tail.indexOf(NEWLINE, start) + 1) {
      starts.push(start);
    }
    const kept = starts.slice(-count);
    const lines = kept.map((start) => tail.toString("utf8", start, tail.indexOf(NEWLINE, start)));
    return {
      lines,
      offsets: kept.map((start) => position + start),
      firstLine: position === 0 ? starts.length - kept.length + 1 : undefined,
      ...repaired,
    };
  } finally {
    closeSync(descriptor);
  }
}

/** Cuts a torn last line off a JSONL file (no-op when the file ends with a newline or is empty). */
export function repairTornTail(file: string): number {
  return readLogTail(file, 0).truncatedBytes;
}

function isWholeJson(bytes: Buffer): boolean {
  if (bytes.includes(0)) return false;
  try {
    const value: unknown = JSON.parse(bytes.toString("utf8"));
    return typeof value === "object" && value !== null;
  } catch {
    return false;
  }
}
