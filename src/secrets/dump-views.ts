import { type TextView, ViewBuilder } from "./text-view.js";

/**
 * A line of a dump (`od`, `hexdump`, `xxd`) starts with its offset: 6 to 16 hex or octal digits,
 * xxd's with a colon, then blanks and the first byte group. Tested first: text without one is
 * left alone at the cost of this one search.
 */
const DUMP_LINE_START = /^[ \t]*[0-9a-fA-F]{6,16}:?[ \t]+\S/m;
const ADDRESS = /^[ \t]*[0-9a-fA-F]{6,16}:?(?=[ \t])/;
const GROUP = /\S+/g;
const HEX_DIGITS = /^[0-9a-fA-F]+$/;
/** A group of a byte dump: a byte in hex, octal or decimal, or one of od -c's characters or escapes. */
const BYTE_GROUP = /^(?:[0-9a-fA-F]{2,3}|\\?.)$/;
/**
 * Fewer groups than this make a dump line only after another one (its last, short line), or
 * after xxd's `offset:` (`xxd -c 5 -g 2`, `xxd -g 16`: a few groups a line).
 */
const MIN_GROUPS = 4;
const OCTAL_WORD = /^[0-7]{6}$/;

/**
 * The views of a dump's lines in which a value that runs from one line into the next is whole
 * again: `joined` holds each run of dump lines' byte groups with nothing between them (hex from
 * `od -tx1`, `hexdump -C`, `xxd`, `xxd -g4`; binary from `xxd -b`; the characters of `od -c`),
 * `spaced` the same groups one blank apart (octal from `od -b` and `hexdump -b`, decimal from
 * `od -tu1`, which need their separators), and `text` each run's character column (`hexdump -C`'s
 * `|…|`, `od -z`'s `>…<`, xxd's) joined across lines. Everything else of the text is kept as it
 * is. A match in a view maps back over the offsets and columns in between, so masking it masks
 * them too. `words`, when the dump has words of 2, 4 or 8 bytes that are not in their bytes'
 * order (`hexdump` and `od -x` without options print 2-byte words little-endian, `od` in octal,
 * `od -tx4` 4-byte ones), holds the groups' bytes in hex in the order they were in, joined as in
 * `joined`.
 */
export interface DumpViews {
  joined: TextView;
  spaced: TextView;
  text: TextView;
  words: TextView | undefined;
}

interface DumpLine {
  /** Where the line starts, ends (before its line break) and the next line starts. */
  start: number;
  end: number;
  next: number;
  /** Each byte group's span. */
  groups: Array<[number, number]>;
  /** The character column's span (its delimiters left out), if the line has one. */
  column: [number, number] | undefined;
  /** Whether its offset ends in a colon (xxd's). */
  labelled: boolean;
}

/** The views of the dump lines in `view`, or undefined when it has none. */
export function dumpViews(view: TextView): DumpViews | undefined {
  const text = view.text;
  if (!DUMP_LINE_START.test(text)) return undefined;
  const lines: Array<DumpLine | undefined> = [];
  for (let start = 0; start < text.length;) {
    const newline = text.indexOf("\n", start);
    const end = newline === -1 ? text.length : newline;
    const next = newline === -1 ? text.length : newline + 1;
    const line = dumpLine(text, start, end, next);
    const follows = lines.length > 0 && lines[lines.length - 1] !== undefined;
    const counts = line !== undefined && (line.groups.length >= MIN_GROUPS || follows || line.labelled);
    lines.push(counts ? line : undefined);
    start = next;
  }
  if (!lines.some((line) => line !== undefined)) return undefined;
  const joined = groupsView(view, lines, "");
  const words = groupsView(view, lines, "", memoryOrder);
  return {
    joined,
    spaced: groupsView(view, lines, " "),
    text: columnsView(view, lines),
    words: words.text === joined.text ? undefined : words,
  };
}

/**
 * The line as a dump line: its offset, then byte groups shaped like the first (as long, or
 * shorter for the last of a dump, as xxd writes an odd count), then what is left as its character
 * column. Undefined when it does not start with an offset and a group.
 */
function dumpLine(text: string, start: number, end: number, next: number): DumpLine | undefined {
  const line = text.slice(start, end);
  const address = ADDRESS.exec(line);
  if (address === null) return undefined;
  const last = line.trimEnd().slice(-1);
  const groups: Array<[number, number]> = [];
  let width = 0;
  let wordGroups = false;
  let rest = line.length;
  const labelled = address[0].endsWith(":");
  GROUP.lastIndex = address[0].length;
  for (let group = GROUP.exec(line); group !== null; group = GROUP.exec(line)) {
    const token = group[0];
    // xxd sets its groups one blank apart and its column two: `61 61 61  aaa`, whose `aaa` (or
    // `16B`) would pass for a byte.
    const previous = groups[groups.length - 1];
    const gap = previous === undefined ? 0 : group.index - (previous[1] - start);
    // `xxd -e` right-aligns its last, shorter word in the word's place: `6c61762d     6575`.
    const lastWord = wordGroups && token.length < width && gap === width - token.length + 1;
    if (labelled && previous !== undefined && gap >= 2 && !lastWord) {
      rest = group.index;
      break;
    }
    if (groups.length === 0) {
      // Groups of 4 or more characters are hex or binary words (xxd); shorter ones are single
      // bytes in hex, octal or decimal, or od -c's characters and escapes (`\n`, `001`).
      width = token.length;
      wordGroups = width >= 4;
      if (wordGroups && !HEX_DIGITS.test(token)) break;
      if (!wordGroups && (isColumnStart(token, last) || !BYTE_GROUP.test(token))) break;
    } else if (wordGroups) {
      if (token.length > width || !HEX_DIGITS.test(token)) {
        rest = group.index;
        break;
      }
    } else if (isColumnStart(token, last) || !BYTE_GROUP.test(token)) {
      rest = group.index;
      break;
    }
    groups.push([start + group.index, start + group.index + token.length]);
    // A shorter word is the dump's last group: what follows is its column.
    if (wordGroups && token.length < width) {
      rest = GROUP.lastIndex;
      break;
    }
    rest = line.length;
  }
  if (groups.length === 0) return undefined;
  return { start, end, next, groups, column: characterColumn(line, rest, start), labelled };
}

/**
 * `|…|` (hexdump -C) or `>…<` (od -z) opens a character column that closes at the line's end
 * (`last`, its last character other than a blank: found once per line, not once per group).
 */
function isColumnStart(token: string, last: string): boolean {
  return (token.startsWith("|") && last === "|") || (token.startsWith(">") && last === "<");
}

/** The span of the character column from `from` on (delimiters and the blanks around it left out). */
function characterColumn(line: string, from: number, offset: number): [number, number] | undefined {
  let start = from;
  let end = line.length;
  while (start < end && /[ \t]/.test(line.charAt(start))) start++;
  while (end > start && /[ \t\r]/.test(line.charAt(end - 1))) end--;
  if (end - start >= 2) {
    const first = line.charAt(start);
    const last = line.charAt(end - 1);
    if ((first === "|" && last === "|") || (first === ">" && last === "<")) {
      start++;
      end--;
    }
  }
  return end > start ? [offset + start, offset + end] : undefined;
}

/**
 * The view with each dump line's offset and column dropped and its groups `separator` apart (each
 * as `group` gives it, when it gives one); a dump line followed by another is joined to it the
 * same way.
 */
function groupsView(
  view: TextView,
  lines: Array<DumpLine | undefined>,
  separator: string,
  group?: (token: string) => string | undefined,
): TextView {
  const text = view.text;
  const builder = new ViewBuilder(view);
  lines.forEach((line, index) => {
    if (line === undefined) return;
    const groups = line.groups;
    const first = groups[0] as [number, number];
    if (first[0] > line.start) builder.replace(line.start, first[0], "");
    for (let index = 0; index < groups.length; index++) {
      const [start, end] = groups[index] as [number, number];
      if (index > 0) {
        const gapStart = (groups[index - 1] as [number, number])[1];
        if (text.slice(gapStart, start) !== separator) builder.replace(gapStart, start, separator);
      }
      const changed = group?.(text.slice(start, end));
      if (changed !== undefined) builder.replace(start, end, changed);
    }
    const last = (groups[groups.length - 1] as [number, number])[1];
    const joinsNext = lines[index + 1] !== undefined;
    const tailEnd = joinsNext ? line.next : line.end;
    if (tailEnd > last) builder.replace(last, tailEnd, joinsNext ? separator : "");
  });
  return builder.finish();
}

/**
 * A little-endian word's bytes in hex, in the order they are in memory: 4, 8 or 16 hex digits
 * (`hexdump`, `od -x`, `od -tx4`, `od -tx8`) or 6 octal digits of 2 bytes (`od`). Undefined for
 * anything else (a byte, `xxd`'s words, which are in order).
 */
function memoryOrder(token: string): string | undefined {
  let hex: string;
  if (token.length === 6 && OCTAL_WORD.test(token)) {
    const value = Number.parseInt(token, 8);
    if (value > 0xffff) return undefined;
    hex = value.toString(16).padStart(4, "0");
  } else if ((token.length === 4 || token.length === 8 || token.length === 16) && HEX_DIGITS.test(token)) {
    hex = token;
  } else return undefined;
  let bytes = "";
  for (let at = hex.length - 2; at >= 0; at -= 2) bytes += hex.slice(at, at + 2);
  return bytes;
}

/** The view with the character columns of consecutive dump lines joined into one text. */
function columnsView(view: TextView, lines: Array<DumpLine | undefined>): TextView {
  const builder = new ViewBuilder(view);
  let open: number | undefined;
  for (const line of lines) {
    const column = line?.column;
    if (column === undefined) {
      open = undefined;
      continue;
    }
    if (open !== undefined) builder.replace(open, column[0], "");
    open = column[1];
  }
  return builder.finish();
}
