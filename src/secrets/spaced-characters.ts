import { type TextView, ViewBuilder } from "./text-view.js";

/**
 * One character as `od -c` prints it (a character, an escape such as `\n`, a byte above 127 in
 * three octal digits) in its field of 4, the fields one after another and from line to line:
 * `   s   k   -   l`, the next line's offset (`od -c`, `hexdump -c`) passed over. Four characters
 * or more in a row. A space is a field of 4 blanks, so 5 to 7 blanks stand for a space between
 * two characters.
 */
const OD_CHARACTERS =
  / {1,3}(?:\\[^ \n]|[0-3][0-7]{2}|[^ \t\r\n])(?:(?: {1,3}| {5,7}|[ \t]*\r?\n(?:[0-9a-fA-F]{6,16}(?= ))?[ \t]*)(?:\\[^ \n]|[0-3][0-7]{2}|[^ \t\r\n])){3,}(?![^ \t\r\n])/g;
/** A character of such a run, or a line's offset (passed over). */
const OD_CHARACTER = /\n[0-9a-fA-F]{6,16}(?= )|\\[^ \n]|[0-3][0-7]{2}|[^ \t\r\n]/g;
/** Two of od's fields in a row, tested first (a regex that opens with a literal is a fast scan). */
const OD_FIELDS = / {3}[^ \t\r\n] {1,3}[^ \t\r\n]/;

/**
 * A list of one-character strings, as a program prints one: Python's and Rust's `['s', 'k']`,
 * JSON's `["s","k"]`, Node's `[ 's', 'k' ]` (over several lines when long), Go's `%q` of runes
 * `['s' 'k']`. Four characters or more in a row.
 */
const LISTED_CHARACTERS =
  /[[(]\s*(?:'(?:\\.|[^'\\])'|"(?:\\.|[^"\\])")(?:(?:\s*,\s*|[ \t]+)(?:'(?:\\.|[^'\\])'|"(?:\\.|[^"\\])")){3,}/g;
const LISTED_CHARACTER = /'(?:\\.|[^'\\])'|"(?:\\.|[^"\\])"/g;
/** What two items of such a list hold between them, tested first (a regex: `includes` was 5x slower). */
const LIST_GAP = /'(?:, ?| )'|", ?"/;
/** Either, in one scan: text without one has no run. */
const OD_FIELDS_OR_LIST_GAP = new RegExp(`${OD_FIELDS.source}|${LIST_GAP.source}`);

/**
 * The view of `view` in which each run of characters printed one by one (`od -An -c`, a list of
 * characters) reads as the characters joined; text outside the runs is dropped (a line break in
 * its place), so a match can only lie inside a run. Escapes and octal bytes are left as escapes
 * (`\n`, `\303`) for decodeEscapes. Undefined when the text has no such run.
 */
export function spacedCharactersView(view: TextView): TextView | undefined {
  const text = view.text;
  if (!OD_FIELDS_OR_LIST_GAP.test(text)) return undefined;
  const runs: Run[] = [];
  if (OD_FIELDS.test(text)) collect(text, OD_CHARACTERS, OD_CHARACTER, runs);
  if (LIST_GAP.test(text)) collect(text, LISTED_CHARACTERS, LISTED_CHARACTER, runs);
  if (runs.length === 0) return undefined;
  runs.sort((left, right) => left.start - right.start);
  const builder = new ViewBuilder(view);
  let position = 0;
  for (const run of runs) {
    if (run.start < position) continue;
    builder.replace(position, run.start, "\n");
    run.items.forEach(([start, end], index) => {
      if (index > 0) {
        const previous = (run.items[index - 1] as [number, number])[1];
        builder.replace(previous, start, run.od && isSpaceGap(text.slice(previous, start)) ? " " : "");
      }
      builder.replace(start, end, character(text.slice(start, end)));
    });
    position = (run.items[run.items.length - 1] as [number, number])[1];
  }
  builder.replace(position, text.length, "\n");
  return builder.finish();
}

/** A run: where it starts, each character's span, and whether it is od's. */
interface Run {
  start: number;
  items: Array<[number, number]>;
  od: boolean;
}

function collect(text: string, pattern: RegExp, item: RegExp, runs: Run[]): void {
  pattern.lastIndex = 0;
  for (let match = pattern.exec(text); match !== null; match = pattern.exec(text)) {
    const items: Array<[number, number]> = [];
    item.lastIndex = 0;
    for (let found = item.exec(match[0]); found !== null; found = item.exec(match[0])) {
      if (found[0].startsWith("\n")) continue;
      items.push([match.index + found.index, match.index + found.index + found[0].length]);
    }
    if (items.length > 0)
      runs.push({ start: (items[0] as [number, number])[0], items, od: pattern === OD_CHARACTERS });
  }
}

/** Between two of od's fields on one line, 5 to 7 blanks hold a field of a space. */
function isSpaceGap(gap: string): boolean {
  return gap.length >= 5 && !gap.includes("\n");
}

/** An item as the character it stands for: quotes dropped, octal as `\NNN`, escapes kept. */
function character(item: string): string {
  if (item.length === 3 && item[0] !== "'" && item[0] !== '"') return `\\${item}`;
  return item.length > 1 && (item[0] === "'" || item[0] === '"') ? item.slice(1, -1) : item;
}
