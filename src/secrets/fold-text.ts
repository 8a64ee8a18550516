import { type TextView, ViewBuilder } from "./text-view.js";

/**
 * Quote characters, dropped: shell quoting (`'it'\''s'`, `$'…'`), CSV and SQL doubling (`""`),
 * Python's `repr`, PowerShell's backtick and typographic quotes all insert or double them around
 * and inside a value. Non-ASCII runs are matched here too, to be folded.
 */
// eslint-disable-next-line no-control-regex -- the range is ASCII's, NUL included
const QUOTES_OR_NON_ASCII = /['"`]+|[^\x00-\x7f]+/g;

/** Quotes a non-ASCII character folds to (full-width `＂`) and typographic ones, dropped like ASCII ones. */
const FOLDED_QUOTES = /['"`\u2018-\u201f\u00ab\u00bb\u2039\u203a]/g;

/** Whitespace and `+` (a space in a form body or Python's `quote_plus`) become a space. */
const SPACES = /[\t\n\v\f\r+]/g;

/** Accents and other combining marks, dropped: `iconv //TRANSLIT` and slugifiers write ö as o. */
const COMBINING_MARKS = /\p{M}/gu;

const foldedCharacters = new Map<string, string>();

/**
 * The canonical form of a (decoded) text that secrets are matched in: compatibility-decomposed
 * (NFKD: NFC, NFD and NFKC spellings, full-width letters and ligatures become one) with combining
 * marks dropped (accents: ö, o + U+0308 and a transliterated o meet), case-folded,
 * quotes dropped, whitespace and `+` made one space. A value is found in it whatever its case,
 * Unicode normalisation or quoting in the output.
 */
export function foldText(view: TextView): TextView {
  const folded = view.replace(QUOTES_OR_NON_ASCII, (match) =>
    match[0].charCodeAt(0) < 0x80 ? "" : foldNonAscii(match[0]),
  );
  let lower = folded.text.toLowerCase();
  // Full case folding already happened outside ASCII: only ASCII letters change here.
  if (lower.length !== folded.text.length) lower = folded.text.replace(/[A-Z]+/g, (run) => run.toLowerCase());
  return folded.withSameLength(lower.replace(SPACES, " "));
}

/** Each character: NFKD, then upper- and lowercased (so `ß` and `SS` meet as `ss`), NFKD again. */
function foldNonAscii(run: string): string {
  let folded = "";
  for (const character of run) {
    let known = foldedCharacters.get(character);
    if (known === undefined) {
      known = character
        .normalize("NFKD")
        .toUpperCase()
        .toLowerCase()
        .normalize("NFKD")
        .replace(COMBINING_MARKS, "")
        .replace(FOLDED_QUOTES, "");
      if (foldedCharacters.size < 10_000) foldedCharacters.set(character, known);
    }
    folded += known;
  }
  return folded;
}

/**
 * A line of base64, base32, hex or binary as `base64`, `base32`, PEM, MIME and `xxd -p` wrap them
 * (8 characters or more, indentation allowed), up to its line break; matched where a line starts.
 */
const ENCODED_LINE = /[ \t]*[A-Za-z0-9+/_=-]{8,}[ \t]*\r?\n[ \t]*(?=[A-Za-z0-9+/_=-])/y;
const LINE_END = /[ \t]*\r?\n[ \t]*$/;

/**
 * The view with the line breaks (and indentation) between the lines of wrapped encoded blocks
 * removed, so a value's encoding that straddles a break is found whole. Linear: each line is
 * tried once, where it starts.
 */
export function joinWrappedLines(view: TextView): TextView {
  const text = view.text;
  if (!text.includes("\n")) return view;
  const builder = new ViewBuilder(view);
  for (let lineStart = 0; lineStart < text.length;) {
    ENCODED_LINE.lastIndex = lineStart;
    const line = ENCODED_LINE.exec(text);
    const newline = text.indexOf("\n", lineStart);
    if (newline === -1) break;
    if (line !== null) {
      const end = lineStart + line[0].length;
      const breakLength = (LINE_END.exec(line[0]) as RegExpExecArray)[0].length;
      builder.replace(end - breakLength, end, "");
    }
    lineStart = newline + 1;
  }
  return builder.finish();
}

/**
 * Hex bytes written one by one, as `od -An -tx1`, `hexdump -C` within a line, `xxd -i` (`0x70,
 * 0x40`) and MAC-style `70:40` write them: four or more in a row, in lowercase text.
 */
const SPACED_HEX =
  /(?<![0-9a-z])(?:(?:0x)?[0-9a-f]{2}(?:,?[ \t]{0,2}(?:\r?\n[ \t]*)?|:)){3,}(?:0x)?[0-9a-f]{2}(?![0-9a-z])/g;
const HEX_SEPARATORS = /0x|[^0-9a-f]/g;

/** The (lowercase) view with each run of spaced hex bytes written as one hex string. */
export function joinSpacedHex(view: TextView): TextView {
  return view.replace(SPACED_HEX, (match) => match[0].replace(HEX_SEPARATORS, ""));
}

/** A byte in decimal (0 to 255), or signed (-128 to -1: Java's `byte`, `od -td1`). */
const DECIMAL_BYTE = "(?:25[0-5]|2[0-4][0-9]|1[0-9]{2}|[1-9]?[0-9]|-(?:12[0-8]|1[01][0-9]|[1-9][0-9]?))";
const DECIMAL_SEPARATOR = "(?:,[ \\t]*(?:\\r?\\n[ \\t]*)?|[ \\t]+(?:\\r?\\n[ \\t]*)?|\\r?\\n[ \\t]*)";

/**
 * Bytes written as decimal numbers, as Python's `list(s.encode())`, Node's `Uint8Array` and
 * `Buffer.toJSON()`, `od -An -tu1`, Java's `Arrays.toString(bytes)` and `od -td1` write them: four
 * or more in a row.
 */
const DECIMAL_BYTES = new RegExp(
  `(?<![0-9.])(?:${DECIMAL_BYTE}${DECIMAL_SEPARATOR}){3,}${DECIMAL_BYTE}(?![0-9.])`,
  "g",
);
const DECIMAL_SEPARATORS = new RegExp(DECIMAL_SEPARATOR, "g");

/** The view with each run of decimal bytes written as `112,64,115`. */
export function joinDecimalBytes(view: TextView): TextView {
  return view.replace(DECIMAL_BYTES, (match) => match[0].replace(DECIMAL_SEPARATORS, ","));
}

/** A byte in three octal digits (000 to 377), as `od -b` writes it. */
const OCTAL_BYTE = "[0-3][0-7]{2}";

/** Bytes written as three-digit octal numbers, as `od -b`, `od -to1` and `hexdump -b` write them: four or more in a row. */
const OCTAL_BYTES = new RegExp(
  `(?<![0-9.])(?:${OCTAL_BYTE}${DECIMAL_SEPARATOR}){3,}${OCTAL_BYTE}(?![0-9.])`,
  "g",
);

/** The view with each run of three-digit octal bytes written as `163,153,055`. */
export function joinOctalBytes(view: TextView): TextView {
  return view.replace(OCTAL_BYTES, (match) => match[0].replace(DECIMAL_SEPARATORS, ","));
}
