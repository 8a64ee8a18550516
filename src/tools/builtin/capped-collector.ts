/**
 * Keeps the beginning and the end of a stream (up to `maxBytes` each) and counts what passes in
 * between, so memory stays bounded however much a command prints, and both the first lines and the
 * last ones (where errors and summaries usually are) can be shown.
 */
export class CappedCollector {
  readonly #maxBytes: number;
  readonly #head: Buffer[] = [];
  #headBytes = 0;
  #tail: Buffer[] = [];
  #tailBytes = 0;
  #total = 0;

  constructor(maxBytes: number) {
    this.#maxBytes = maxBytes;
  }

  push(chunk: Buffer): void {
    this.#total += chunk.length;
    const room = this.#maxBytes - this.#headBytes;
    if (room > 0) {
      const kept = chunk.length > room ? chunk.subarray(0, room) : chunk;
      this.#head.push(kept);
      this.#headBytes += kept.length;
    }
    this.#tail.push(chunk);
    this.#tailBytes += chunk.length;
    while (this.#tailBytes - (this.#tail[0]?.length ?? 0) >= this.#maxBytes) {
      this.#tailBytes -= this.#tail.shift()?.length ?? 0;
    }
  }

  /** Bytes seen in all. */
  get total(): number {
    return this.#total;
  }

  /**
   * The output as UTF-8 within `budget` bytes (at most the collector's own limit): all of it when it
   * fits, else its first and last halves with a note saying how much was left out between them,
   * each half passed through `redactPiece` when given.
   */
  text(budget: number, redactPiece?: (text: string, cutAt: "end" | "start") => string): string {
    const whole = Buffer.concat(this.#head);
    if (this.#total <= Math.min(budget, this.#maxBytes)) return whole.toString("utf8");
    const half = Math.floor(Math.min(budget, this.#maxBytes) / 2);
    const tail = Buffer.concat(this.#tail);
    const first = whole
      .subarray(0, half)
      .toString("utf8")
      .replace(/\uFFFD$/, "");
    const last = tail
      .subarray(Math.max(0, tail.length - half))
      .toString("utf8")
      .replace(/^\uFFFD/, "");
    // A secret cut in two at either side of the gap is masked too, not only whole ones.
    const shownFirst = redactPiece ? redactPiece(first, "end") : first;
    const shownLast = redactPiece ? redactPiece(last, "start") : last;
    return `${shownFirst}\n[… ${this.#total - 2 * half} bytes cut …]\n${shownLast}`;
  }
}
