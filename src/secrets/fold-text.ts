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

/** Whitespace and `+` (a space in a form body or Python's `quote_plus`) are one character. */
const SPACES = /[\t\n\v\f\r +]/g;

const foldedCharacters = new Map<string, string>();

/**
 * The canonical form of a (decoded) text that secrets are matched in: compatibility-decomposed
 * (NFKD: NFC, NFD and NFKC spellings, full-width letters and ligatures become one), case-folded,
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
        .replace(FOLDED_QUOTES, "");
      if (foldedCharacters.size < 10_000) foldedCharacters.set(character, known);
    }
    folded += known;
  }
  return folded;
}

/**
 * Lines of base64, base32 or hex as `base64`, `base32`, PEM, MIME and `xxd -p` wrap them: the line
 * breaks (and indentation) inside such a block are dropped, so a value's encoding that straddles a
 * break is found whole.
 */
const WRAPPED_BLOCK = /(?:[A-Za-z0-9+/_=-]{8,}[ \t]*\r?\n[ \t]*)+[A-Za-z0-9+/_=-]+/g;
const LINE_BREAK = /[ \t]*\r?\n[ \t]*/g;

/** The view with the line breaks inside wrapped encoded blocks removed. */
export function joinWrappedLines(view: TextView): TextView {
  const text = view.text;
  if (!text.includes("\n")) return view;
  const builder = new ViewBuilder(view);
  WRAPPED_BLOCK.lastIndex = 0;
  for (let block = WRAPPED_BLOCK.exec(text); block !== null; block = WRAPPED_BLOCK.exec(text)) {
    for (const lineBreak of block[0].matchAll(LINE_BREAK)) {
      const start = block.index + lineBreak.index;
      builder.replace(start, start + lineBreak[0].length, "");
    }
  }
  return builder.finish();
}
