import type { OpenFile } from "../workdir/open-file.js";
import type { ToolContext } from "../tool-definition.js";
import { type FileStart, textLines } from "./text-lines.js";

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

/** The lines asked for of an open text file, within a character budget; the file is streamed, never loaded whole. */
export async function readLines(file: OpenFile, options: ReadLinesOptions): Promise<LinesRead> {
  const lines: string[] = [];
  let number = 0;
  let collected = 0;
  let cut = false;
  for await (const line of textLines(file, {
    maxLineCharacters: options.maxCharacters,
    signal: options.signal,
    ...(options.start === undefined ? {} : { start: options.start }),
  })) {
    number++;
    if (number < options.offset) continue;
    if (lines.length >= options.limit || collected >= options.maxCharacters)
      return { lines, more: true, cut };
    const room = options.maxCharacters - collected;
    const lineCut = line.cut || line.text.length > room;
    cut ||= lineCut;
    const text = line.text.slice(0, room);
    // The executor's masking only knows whole values: the cut must mask the part of one it splits.
    lines.push(lineCut ? options.redactPiece(text, "end") : text);
    collected += text.length + 1;
  }
  return { lines, more: false, cut };
}
