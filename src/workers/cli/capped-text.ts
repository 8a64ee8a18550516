import { cliCutNote } from "./cli-output-limits.js";

/** Masks a value cut in two at the end of a text (the vault's redactor's `redactCutEnd`). */
export type CutEndMask = (text: string) => string;

/**
 * Text gathered piece by piece up to `limit` characters; what comes after is only counted, and
 * `text` ends with a note saying how much was cut. Pieces are joined once, when read. Where it is
 * cut, a secret cut in two is masked (`cutEnd`): masking the whole later cannot tell its first
 * characters from text.
 */
export class CappedText {
  readonly #limit: number;
  readonly #what: string;
  #parts: string[] = [];
  #length = 0;
  #dropped = 0;
  #cut = false;
  readonly #cutEnd: CutEndMask;

  constructor(limit: number, what: string, cutEnd: CutEndMask = (text) => text) {
    this.#limit = limit;
    this.#what = what;
    this.#cutEnd = cutEnd;
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
    if (this.#cut) return;
    // The first cut (this piece, or the next after a full text): nothing is kept after it.
    this.#cut = true;
    const masked = this.#cutEnd(this.#parts.join(""));
    this.#parts = masked === "" ? [] : [masked];
    this.#length = this.#limit;
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
    this.#cut = false;
  }
}
