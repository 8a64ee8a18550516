import type { OpenFile } from "../workdir/open-file.js";
import { StringDecoder } from "node:string_decoder";
import { LineSplitter } from "./line-splitter.js";

/** Bytes read at a time (what a read stream would read). */
const CHUNK_BYTES = 65_536;

/** One line of a text file, possibly cut. */
export interface TextLine {
  /** The line without its end (`\n` or `\r\n`), at most `maxLineCharacters` long. */
  text: string;
  /** The line was longer than `maxLineCharacters`; the rest was dropped. */
  cut: boolean;
}

/**
 * Streams an open UTF-8 file line by line, from its start; the handle stays open. Lines are split by hand rather than with readline so that
 * even one enormous line never sits in memory: only its first `maxLineCharacters` are kept.
 */
export async function* textLines(
  file: OpenFile,
  options: { maxLineCharacters: number; signal: AbortSignal; start?: FileStart },
): AsyncGenerator<TextLine> {
  const splitter = new LineSplitter(options.maxLineCharacters);
  const ended: TextLine[] = [];
  const keep = (text: string, cut: boolean) => ended.push({ text, cut }) > 0;
  for await (const chunk of textChunks(file, options.signal, options.start)) {
    splitter.write(chunk, keep);
    yield* ended;
    ended.length = 0;
  }
  splitter.end(keep);
  yield* ended;
}

/** The first bytes of a file, read once for both a look at them and the lines (readFileStart). */
export interface FileStart {
  bytes: Buffer;
  /** The read came back short: `bytes` are the whole file. */
  whole: boolean;
}

/** Fewer bytes than this are never asked for: a binary look takes the first 8 KiB (looks-binary.ts). */
const START_MINIMUM_BYTES = 8_192;

/**
 * Reads the first bytes of an open file, whatever its position: CHUNK_BYTES, or, given its `size`
 * (its fstat), enough for all of it and one byte more (never fewer than START_MINIMUM_BYTES), so
 * that a short read tells it ended. A buffer as big as the file, not 64 KiB for every small file:
 * buffers live outside the JS heap, and 64 KiB each call had the garbage collector run far more
 * often (once every few hundred calls, a full collection of the whole heap).
 */
export async function readFileStart(file: OpenFile, size?: number): Promise<FileStart> {
  const length =
    size === undefined ? CHUNK_BYTES : Math.min(CHUNK_BYTES, Math.max(START_MINIMUM_BYTES, size + 1));
  // Not zeroed: only the bytes read are ever looked at.
  const buffer = Buffer.allocUnsafe(length);
  const { bytesRead } = await file.read(buffer, 0, length, 0);
  return { bytes: buffer.subarray(0, bytesRead), whole: bytesRead < length };
}

/** The text of a file read whole by readFileStart (a split character at its end as chunks decodes it). */
export function wholeText(start: FileStart): string {
  const decoder = new StringDecoder("utf8");
  return decoder.write(start.bytes) + decoder.end();
}

/**
 * The file's text from its start, in pieces of at most CHUNK_BYTES (a split character is kept
 * whole); `start`: its first bytes, read already (readFileStart), not read again. The text ends at
 * the first NUL byte, as grep's does: what follows is binary, and a sparse file (text, then a
 * terabyte of NULs that take no disk, made by one `truncate`) is not read to its end.
 */
export async function* textChunks(
  file: OpenFile,
  signal: AbortSignal,
  start?: FileStart,
): AsyncGenerator<string> {
  const decoder = new StringDecoder("utf8");
  let position = 0;
  let more = true;
  if (start !== undefined) {
    position = start.bytes.length;
    const nul = start.bytes.indexOf(0);
    // A regular file reads short only at its end: a short start is the whole file.
    more = !start.whole && nul === -1;
    const text = decoder.write(nul === -1 ? start.bytes : start.bytes.subarray(0, nul));
    if (text !== "") yield text;
  }
  const buffer = more ? Buffer.alloc(CHUNK_BYTES) : undefined;
  while (buffer !== undefined && more) {
    signal.throwIfAborted();
    const { bytesRead } = await file.read(buffer, 0, CHUNK_BYTES, position);
    position += bytesRead;
    const nul = buffer.subarray(0, bytesRead).indexOf(0);
    const text = decoder.write(buffer.subarray(0, nul === -1 ? bytesRead : nul));
    if (text !== "") yield text;
    // A regular file reads short only at its end: no read is spent on learning that.
    more = bytesRead === CHUNK_BYTES && nul === -1;
  }
  const rest = decoder.end();
  if (rest !== "") yield rest;
}
