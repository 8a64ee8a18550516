/**
 * The last texts a CLI run said, as many as cover `limit` characters (the oldest one kept may
 * reach further back): what the fallback note quotes. Older texts are only counted, so a run that
 * says a thousand long messages holds a few of them, not all.
 */
export class RecentTexts {
  readonly #limit: number;
  #texts: string[] = [];
  /** Index of the oldest text kept in `#texts`: dropping one moves it, not the array. */
  #first = 0;
  #length = 0;
  #droppedCharacters = 0;

  constructor(limit: number) {
    this.#limit = limit;
  }

  push(text: string): void {
    this.#texts.push(text);
    this.#length += text.length;
    for (;;) {
      const oldest = this.#texts[this.#first];
      if (oldest === undefined || this.#length - oldest.length < this.#limit) break;
      this.#length -= oldest.length;
      this.#droppedCharacters += oldest.length;
      this.#first += 1;
    }
    if (this.#first > 64 && this.#first * 2 > this.#texts.length) {
      this.#texts = this.#texts.slice(this.#first);
      this.#first = 0;
    }
  }

  /** The texts kept, oldest first. */
  get texts(): readonly string[] {
    return this.#first === 0 ? this.#texts : this.#texts.slice(this.#first);
  }

  /** Characters of the texts no longer kept. */
  get droppedCharacters(): number {
    return this.#droppedCharacters;
  }
}
