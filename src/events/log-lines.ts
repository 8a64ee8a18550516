import type { FileHandle } from "node:fs/promises";

const NEWLINE = 0x0a;

/** One line of a log file: its text (without the newline) and where it starts and ends in bytes. */
export interface LogLine {
  text: string;
  /** Byte offset of the line's first byte. */
  start: number;
  /** Byte offset just after the line's newline (the next line's start). */
  end: number;
}

/** Counts the bytes a reader took from disk (tests check that a late page reads few). */
export interface BytesRead {
  bytes: number;
}

/**
 * The lines of an open file from byte `position` on, read `chunkBytes` at a time; a last line
 * without a newline is yielded too. A line longer than a chunk is assembled from several reads.
 */
export async function* logLinesFrom(
  handle: FileHandle,
  position: number,
  chunkBytes: number,
  counter?: BytesRead,
): AsyncGenerator<LogLine> {
  let pieces: Buffer[] = [];
  let lineStart = position;
  let offset = position;
  for (;;) {
    const chunk = Buffer.allocUnsafe(chunkBytes);
    const { bytesRead } = await handle.read(chunk, 0, chunkBytes, offset);
    if (counter) counter.bytes += bytesRead;
    if (bytesRead === 0) break;
    let from = 0;
    for (let newline = chunk.indexOf(NEWLINE, from); newline !== -1 && newline < bytesRead;) {
      pieces.push(chunk.subarray(from, newline));
      const end = offset + newline + 1;
      yield { text: Buffer.concat(pieces).toString("utf8"), start: lineStart, end };
      pieces = [];
      lineStart = end;
      from = newline + 1;
      newline = chunk.indexOf(NEWLINE, from);
    }
    if (from < bytesRead) pieces.push(chunk.subarray(from, bytesRead));
    offset += bytesRead;
  }
  if (pieces.length > 0) {
    yield { text: Buffer.concat(pieces).toString("utf8"), start: lineStart, end: offset };
  }
}
