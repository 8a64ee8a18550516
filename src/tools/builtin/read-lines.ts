import type { OpenFile } from "../workdir/open-file.js";
import type { ToolContext } from "../tool-definition.js";
import { LineSplitter } from "./line-splitter.js";
import { type FileStart, textChunks, wholeText } from "./text-lines.js";

/** What a bounded line read found. */
export interface LinesRead {
  lines: string[];
  /** True when the file has lines after the last one returned. */
  more: boolean;
  /** True when a line was cut at the character budget. */
  cut: boolean;
}

export interface ReadLinesOptions {
  /** 1-based line to start at. */
  offset: number;
  /** Lines to return at most. */
  limit: number;
  /** Characters of text to collect at most (the tool's own output cap). */
  maxCharacters: number;
  signal: AbortSignal;
  /** Masks secrets in a line cut at the budget, including a value the cut splits (ToolContext.redactPiece). */
  redactPiece: ToolContext["redactPiece"];
  /** The file's first bytes, read already (readFileStart). */
  start?: FileStart;
}

/**
 * The lines asked for of an open text file, within a character budget; the file is streamed, never
 * loaded whole. A file its start read whole (the common small file) is split at once, with no
 * promise per piece.
 */
export async function readLines(file: OpenFile, options: ReadLinesOptions): Promise<LinesRead> {
  const lines: string[] = [];
  let number = 0;
  let collected = 0;
  let cut = false;
  let more = false;
  const take = (text: string, lineCut: boolean): boolean => {
    number++;
    if (number < options.offset) return true;
    if (lines.length >= options.limit || collected >= options.maxCharacters) {
      more = true;
      return false;
    }
    const room = options.maxCharacters - collected;
    const partial = lineCut || text.length > room;
    cut ||= partial;
    const kept = text.slice(0, room);
    // The executor's masking only knows whole values: the cut must mask the part of one it splits.
    lines.push(partial ? options.redactPiece(kept, "end") : kept);
    collected += kept.length + 1;
    return true;
  };
  const splitter = new LineSplitter(options.maxCharacters);
  if (options.start?.whole === true) {
    if (splitter.write(wholeText(options.start), take)) splitter.end(take);
    return { lines, more, cut };
  }
  for await (const piece of textChunks(file, options.signal, options.start)) {
    if (!splitter.write(piece, take)) return { lines, more, cut };
  }
  splitter.end(take);
  return { lines, more, cut };
}
