/** Receives each line a LineSplitter ends; returns false to stop the splitting there. */
export type LineSink = (text: string, cut: boolean) => boolean;

/**
 * Splits text given in pieces into lines (ended by `\n` or `\r\n`, the end dropped), keeping at
 * most `maxLineCharacters` of each: the rest of a longer line is dropped and the line marked cut,
 * so even one enormous line never sits in memory. Synchronous, so that a file read whole is split
 * without a promise per line.
 */
export class LineSplitter {
  readonly #maxLineCharacters: number;
  #current = "";
  #cut = false;

  constructor(maxLineCharacters: number) {
    this.#maxLineCharacters = maxLineCharacters;
  }

  /** Hands `sink` each line `piece` ends; false when the sink stopped it. */
  write(piece: string, sink: LineSink): boolean {
    let start = 0;
    for (let newline = piece.indexOf("\n"); newline !== -1; newline = piece.indexOf("\n", start)) {
      this.#add(piece, start, newline);
      start = newline + 1;
      if (!this.#take(sink)) return false;
    }
    this.#add(piece, start, piece.length);
    return true;
  }

  /** Hands `sink` the last line, if the text did not end with a line end; false when the sink stopped. */
  end(sink: LineSink): boolean {
    return this.#current !== "" || this.#cut ? this.#take(sink) : true;
  }

  #add(piece: string, from: number, to: number): void {
    const room = this.#maxLineCharacters - this.#current.length;
    if (to - from > room) this.#cut = true;
    if (room > 0 && to > from) this.#current += piece.slice(from, Math.min(to, from + room));
  }

  #take(sink: LineSink): boolean {
    const current = this.#current;
    const text = current.endsWith("\r") ? current.slice(0, -1) : current;
    const cut = this.#cut;
    this.#current = "";
    this.#cut = false;
    return sink(text, cut);
  }
}
