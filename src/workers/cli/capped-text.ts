import { cliCutNote } from "./cli-output-limits.js";

/**
 * Text gathered piece by piece up to `limit` characters; what comes after is only counted, and
 * `text` ends with a note saying how much was cut. Pieces are joined once, when read.
 */
export class CappedText {
  readonly #limit: number;
  readonly #what: string;
  #parts: string[] = [];
  #length = 0;
  #dropped = 0;

  constructor(limit: number, what: string) {
    this.#limit = limit;
    this.#what = what;
  }

  get empty(): boolean {
    return this.#length === 0 && this.#dropped === 0;
  }

  /** Adds `piece`; `droppedBefore` counts characters of it already cut elsewhere (they add to the note). */
  append(piece: string, droppedBefore = 0): void {
    this.#dropped += droppedBefore;
    const room = this.#limit - this.#length;
    if (piece.length <= room) {
      this.#parts.push(piece);
      this.#length += piece.length;
      return;
    }
    if (room > 0) {
      this.#parts.push(piece.slice(0, room));
      this.#length += room;
    }
    this.#dropped += piece.length - Math.max(0, room);
  }

  /** The text kept, without a note. */
  get kept(): string {
    const kept = this.#parts.join("");
    this.#parts = kept === "" ? [] : [kept];
    return kept;
  }

  /** Characters cut so far. */
  get dropped(): number {
    return this.#dropped;
  }

  /** The text kept, with the note where it was cut (when it was). */
  get text(): string {
    const kept = this.kept;
    return this.#dropped === 0 ? kept : kept + cliCutNote(this.#dropped, this.#limit, this.#what);
  }

  clear(): void {
    this.#parts = [];
    this.#length = 0;
    this.#dropped = 0;
  }
}
