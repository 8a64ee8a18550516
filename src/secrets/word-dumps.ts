import { type TextView, ViewBuilder } from "./text-view.js";

/**
 * Lines made only of numbers (hex, decimal, octal; a sign for `od -d`) set apart by blanks, one
 * after another: the words of `od -An -x`, `od -tx4`, `od -tx8`, `od -d`, `od -tu2`, `hexdump -d`
 * and `hexdump -e '/4 "%08x "'`, with or without an offset opening each line.
 */
const WORD_LINES = /^(?:[ \t]*(?:-?[0-9a-fA-F]{2,20}[ \t]+)*-?[0-9a-fA-F]{2,20}[ \t]*(?:\r?\n|$))+/gm;
/**
 * A line that opens with an offset and a group (dumpViews) or with two numbers (a word dump), tested
 * first: text without one (most output: a line of a log opens with a date, of JSON with a quote,
 * of prose with a word) holds no dump at all. No `$`: a multiline `$` here made the test cost as
 * much as the rest of a dump-free text's masking.
 */
const DUMP_OPENS_LINE =
  /^[ \t]*(?:[0-9a-fA-F]{6,16}:?[ \t]+\S|-?[0-9a-fA-F]{2,20}[ \t]+-?[0-9a-fA-F]{2,20}(?![^ \t\r\n]))/m;
const TOKEN = /-?[0-9a-fA-F]+/g;
const HEX = /^[0-9a-fA-F]+$/;
const OCTAL_WORD = /^[0-7]{6}$/;
const DECIMAL = /^-?[0-9]+$/;
/** An offset's least digits (od's are 7 octal digits, hexdump's 7 hex, `od -Ax` 6). */
const MIN_OFFSET_LENGTH = 6;

/** One number of a run, where it is, and whether it opens its line. */
interface Token {
  text: string;
  start: number;
  end: number;
  opensLine: boolean;
}

/** How a run's words read: each word's bytes as hex, in the order they are in memory. */
type Reading = (words: readonly string[]) => string[] | undefined;

/**
 * Views of the runs of numbers in `view` read as words of 2, 4 or 8 bytes, each word written as
 * its bytes in hex in the order they were in memory (the dumps above print them little-endian),
 * the words of a run joined: the run `6b73 6c2d` of `od -An -x` reads `736b2d6c`. One view per
 * reading (hex, octal and decimal words) that some run fits; all text but the runs is dropped
 * from them, so a match can only lie inside a run. A match maps back to the numbers it came from.
 */
export function wordDumpViews(view: TextView): TextView[] {
  const text = view.text;
  WORD_LINES.lastIndex = 0;
  const runs: Token[][] = [];
  for (let match = WORD_LINES.exec(text); match !== null; match = WORD_LINES.exec(text)) {
    runs.push(wordsOf(tokensOf(text, match.index, match[0])));
  }
  if (runs.length === 0) return [];
  const views: TextView[] = [];
  for (const reading of [hexWords, octalWords, decimalWords]) {
    const builder = new ViewBuilder(view);
    let position = 0;
    let fits = false;
    for (const run of runs) {
      const bytes = run.length >= 2 ? reading(run.map((token) => token.text)) : undefined;
      if (bytes === undefined) continue;
      fits = true;
      // The text before the run, and each gap inside it, becomes a break a match cannot cross.
      builder.replace(position, (run[0] as Token).start, "\n");
      run.forEach((token, index) => {
        if (index > 0) builder.replace((run[index - 1] as Token).end, token.start, "");
        builder.replace(token.start, token.end, bytes[index] as string);
      });
      position = (run[run.length - 1] as Token).end;
    }
    if (!fits) continue;
    builder.replace(position, text.length, "\n");
    views.push(builder.finish());
  }
  return views;
}

/** Whether a line of `text` opens as a dump's does: without one, it holds none (dumpViews, wordDumpViews). */
export function mayHoldDump(text: string): boolean {
  return DUMP_OPENS_LINE.test(text);
}

/** The numbers of a run found at `offset`, each marked when it opens a line. */
function tokensOf(text: string, offset: number, run: string): Token[] {
  const tokens: Token[] = [];
  TOKEN.lastIndex = 0;
  for (let match = TOKEN.exec(run); match !== null; match = TOKEN.exec(run)) {
    const start = offset + match.index;
    const before = text.lastIndexOf("\n", start - 1);
    const opensLine = text.slice(before + 1, start).trim() === "";
    tokens.push({ text: match[0], start, end: start + match[0].length, opensLine });
  }
  return tokens;
}

/**
 * The run without its offsets: when every line opens with a number of MIN_OFFSET_LENGTH digits
 * or more, all of one length and of another length than the words after it, those are offsets.
 */
function wordsOf(tokens: Token[]): Token[] {
  const openers = tokens.filter((token) => token.opensLine);
  const first = openers[0];
  if (first === undefined || first.text.length < MIN_OFFSET_LENGTH) return tokens;
  if (openers.some((token) => token.text.length !== first.text.length)) return tokens;
  const words = tokens.filter((token) => !token.opensLine);
  const width = words[0]?.text.length;
  if (width === undefined || width === first.text.length) return tokens;
  return words;
}

/** Hex words of 2, 4 or 8 bytes, all of one width (`od -x`, `od -tx4`, `od -tx8`, `hexdump -e`). */
const hexWords: Reading = (words) => {
  const width = (words[0] as string).length;
  if (width !== 4 && width !== 8 && width !== 16) return undefined;
  if (words.some((word) => word.length !== width || !HEX.test(word))) return undefined;
  return words.map(reversedBytes);
};

/** Octal words of 2 bytes, 6 digits each (`od`, `od -o`). */
const octalWords: Reading = (words) => {
  if (words.some((word) => !OCTAL_WORD.test(word) || Number.parseInt(word, 8) > 0xffff)) return undefined;
  return words.map((word) => reversedBytes(Number.parseInt(word, 8).toString(16).padStart(4, "0")));
};

/**
 * Decimal words (`od -d`, `od -tu2`, `od -tu4`, `od -tu8`, `hexdump -d`), signed or not: 2 bytes
 * each when all fit in 2, else 4 when all fit in 4, else 8.
 */
const decimalWords: Reading = (words) => {
  if (words.some((word) => !DECIMAL.test(word) || word.replace("-", "").length > 20)) return undefined;
  const values = words.map((word) => BigInt(word));
  for (const bytes of [2, 4, 8]) {
    const bits = BigInt(bytes * 8);
    const limit = 1n << bits;
    if (values.every((value) => value < limit && value >= -(limit >> 1n))) {
      return values.map((value) =>
        reversedBytes(((value + limit) % limit).toString(16).padStart(bytes * 2, "0")),
      );
    }
  }
  return undefined;
};

/** A big-endian word's hex with its bytes in the other order, in lowercase. */
function reversedBytes(hex: string): string {
  let bytes = "";
  for (let at = hex.length - 2; at >= 0; at -= 2) bytes += hex.slice(at, at + 2);
  return bytes.toLowerCase();
}
