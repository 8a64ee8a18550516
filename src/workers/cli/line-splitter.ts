import { StringDecoder } from "node:string_decoder";

/** Receives each line; `droppedCharacters` > 0 when the line was longer than the limit and cut. */
export type CliLineSink = (line: string, droppedCharacters: number) => void;

/**
 * Cuts a byte stream into lines (UTF-8 safe across chunks) and hands each to `onLine`, keeping at
 * most `maxLineCharacters` of a line: the rest is counted and dropped as it arrives, so one
 * enormous line (a CLI printing 100 MB without a newline) never sits in memory, and each chunk is
 * searched once rather than joined onto the line read so far.
 */
export class LineSplitter {
  readonly #decoder = new StringDecoder("utf8");
  readonly #onLine: CliLineSink;
  readonly #maxLineCharacters: number;
  #current = "";
  #dropped = 0;

  constructor(onLine: CliLineSink, maxLineCharacters: number) {
    this.#onLine = onLine;
    this.#maxLineCharacters = maxLineCharacters;
  }

  push(chunk: Buffer | string): void {
    this.#split(typeof chunk === "string" ? chunk : this.#decoder.write(chunk));
  }

  /** Hands over the last line when the stream ended without a newline. */
  end(): void {
    this.#split(this.#decoder.end());
    if (this.#current !== "" || this.#dropped > 0) this.#take();
  }

  #split(piece: string): void {
    let start = 0;
    for (let newline = piece.indexOf("\n"); newline !== -1; newline = piece.indexOf("\n", start)) {
      this.#add(piece, start, newline);
      start = newline + 1;
      this.#take();
    }
    this.#add(piece, start, piece.length);
  }

  #add(piece: string, from: number, to: number): void {
    const room = Math.max(0, this.#maxLineCharacters - this.#current.length);
    const kept = Math.min(to - from, room);
    if (kept > 0) this.#current += piece.slice(from, from + kept);
    this.#dropped += to - from - kept;
  }

  #take(): void {
    const line = this.#current.endsWith("\r") ? this.#current.slice(0, -1) : this.#current;
    const dropped = this.#dropped;
    this.#current = "";
    this.#dropped = 0;
    this.#onLine(line, dropped);
  }
}
