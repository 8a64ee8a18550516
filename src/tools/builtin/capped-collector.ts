/** Keeps the first `maxBytes` bytes of a stream and counts the rest, so memory stays bounded. */
export class CappedCollector {
  readonly #maxBytes: number;
  readonly #chunks: Buffer[] = [];
  #kept = 0;
  #total = 0;

  constructor(maxBytes: number) {
    this.#maxBytes = maxBytes;
  }

  push(chunk: Buffer): void {
    this.#total += chunk.length;
    const room = this.#maxBytes - this.#kept;
    if (room <= 0) return;
    const kept = chunk.length > room ? chunk.subarray(0, room) : chunk;
    this.#chunks.push(kept);
    this.#kept += kept.length;
  }

  /** Bytes seen in all. */
  get total(): number {
    return this.#total;
  }

  get truncated(): boolean {
    return this.#total > this.#kept;
  }

  /** The kept bytes as UTF-8, with a note when bytes were dropped. */
  text(): string {
    let text = Buffer.concat(this.#chunks).toString("utf8");
    if (!this.truncated) return text;
    // The cut may split a character: its replacement mark goes.
    if (text.endsWith("\uFFFD")) text = text.slice(0, -1);
    return `${text}\n[cut: showing the first ${this.#kept} of ${this.#total} bytes]`;
  }
}
