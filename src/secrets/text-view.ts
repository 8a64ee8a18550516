/**
 * A text derived from an original one by replacing spans (decoding an escape, dropping a colour
 * code, folding case), which can say where any of its spans came from in the original: a secret
 * found in a decoded view is masked where it was written. Only the replaced spans are recorded,
 * so a view of text that needed no change costs nothing beyond its string.
 */
export class TextView {
  readonly text: string;
  readonly #parent: TextView | undefined;
  /** Replaced spans in order, four numbers each: view start, view end, source start, source end. */
  readonly #edits: readonly number[];

  private constructor(text: string, parent: TextView | undefined, edits: readonly number[]) {
    this.text = text;
    this.#parent = parent;
    this.#edits = edits;
  }

  /** The original text itself. */
  static of(text: string): TextView {
    return new TextView(text, undefined, []);
  }

  /** This view with its text changed character for character (same length, same places). */
  withSameLength(text: string): TextView {
    if (text.length !== this.text.length) throw new RangeError("a same-length view changed length");
    return new TextView(text, this.#parent, this.#edits);
  }

  /**
   * The view with each match of `pattern` (global) replaced by what `replace` returns; undefined
   * (or the match itself) keeps it. Returns this view when nothing changed.
   */
  replace(pattern: RegExp, replace: (match: RegExpExecArray) => string | undefined): TextView {
    const builder = new ViewBuilder(this);
    pattern.lastIndex = 0;
    for (let match = pattern.exec(this.text); match !== null; match = pattern.exec(this.text)) {
      if (match[0] === "") {
        pattern.lastIndex++;
        continue;
      }
      const replacement = replace(match);
      if (replacement !== undefined && replacement !== match[0]) {
        builder.replace(match.index, match.index + match[0].length, replacement);
      }
    }
    return builder.finish();
  }

  /** The span `[start, end)` of this view as a span of the original text. */
  originalSpan(start: number, end: number): [number, number] {
    const sourceStart = this.#sourceStart(start);
    const sourceEnd = end <= start ? sourceStart : this.#sourceEnd(end);
    return this.#parent ? this.#parent.originalSpan(sourceStart, sourceEnd) : [sourceStart, sourceEnd];
  }

  /** Where the character at `position` starts in the source (after any text deleted just before it). */
  #sourceStart(position: number): number {
    const edit = this.#lastEditAt(position);
    if (edit < 0) return position;
    const edits = this.#edits;
    const viewEnd = edits[edit + 1] as number;
    if (position < viewEnd) return edits[edit + 2] as number;
    return (edits[edit + 3] as number) + position - viewEnd;
  }

  /** Where the character before `end` ends in the source. */
  #sourceEnd(end: number): number {
    const position = end - 1;
    const edit = this.#lastEditAt(position);
    if (edit < 0) return end;
    const edits = this.#edits;
    const viewEnd = edits[edit + 1] as number;
    if (position < viewEnd) return edits[edit + 3] as number;
    return (edits[edit + 3] as number) + end - viewEnd;
  }

  /** Index (into #edits) of the last edit starting at or before `position`, or -1. */
  #lastEditAt(position: number): number {
    const edits = this.#edits;
    let low = 0;
    let high = edits.length / 4 - 1;
    let found = -1;
    while (low <= high) {
      const middle = (low + high) >> 1;
      if ((edits[middle * 4] as number) <= position) {
        found = middle * 4;
        low = middle + 1;
      } else high = middle - 1;
    }
    return found;
  }

  /** @internal For ViewBuilder. */
  static derived(text: string, parent: TextView, edits: readonly number[]): TextView {
    return new TextView(text, parent, edits);
  }
}

/** Builds a view of `source` from replacements given in order of position. */
export class ViewBuilder {
  readonly #source: TextView;
  readonly #parts: string[] = [];
  readonly #edits: number[] = [];
  /** Source characters copied or replaced so far. */
  #consumed = 0;
  #length = 0;

  constructor(source: TextView) {
    this.#source = source;
  }

  /** Replaces source `[start, end)` (at or after the previous replacement) with `text`. */
  replace(start: number, end: number, text: string): void {
    const source = this.#source.text;
    if (start > this.#consumed) {
      this.#parts.push(source.slice(this.#consumed, start));
      this.#length += start - this.#consumed;
    }
    this.#edits.push(this.#length, this.#length + text.length, start, end);
    this.#parts.push(text);
    this.#length += text.length;
    this.#consumed = end;
  }

  finish(): TextView {
    if (this.#edits.length === 0) return this.#source;
    this.#parts.push(this.#source.text.slice(this.#consumed));
    return TextView.derived(this.#parts.join(""), this.#source, this.#edits);
  }
}
