import { namedEntity } from "./html-entities.js";
import type { TextView } from "./text-view.js";

/**
 * What a terminal does not show, removed: ANSI escape sequences (CSI such as the colour codes
 * `grep --color` puts inside a match, OSC, DCS and the other ESC forms), a character overstruck by
 * a backspace (`man` bold), C0/C1 control characters other than tab and newline, and the default
 * ignorable code points (zero-width spaces and joiners, soft hyphens, bidi marks, BOM).
 */
// Control characters are what this removes.
const INVISIBLE =
  // eslint-disable-next-line no-control-regex
  /\x1b\[[0-?]*[ -/]*[@-~]?|\x9b[0-?]*[ -/]*[@-~]?|\x1b[\]PX^_][^\x07\x1b\x9c]*(?:\x07|\x1b\\|\x9c)?|\x1b[ -/]*[0-~]?|[^\n\x08]\x08|[\x00-\x08\x0b-\x1f\x7f-\x9f]+|\p{Default_Ignorable_Code_Point}+/gu;

/** HTML character references: decimal, hexadecimal and named, with or without the `;`. */
const ENTITY = /&(?:#[0-9]{1,8}|#[xX][0-9a-fA-F]{1,8}|[A-Za-z][A-Za-z0-9]{1,31});?/g;

/** Percent-escaped bytes (`%C3%B6`, a run decoded together as UTF-8) and JavaScript's `%uHHHH`. */
const PERCENT = /(?:%[0-9A-Fa-f]{2})+|%u[0-9A-Fa-f]{4}/g;

/**
 * Backslash escapes of C, Python, JSON, JavaScript, Perl, Go and the shell (`printf %q`, `$'…'`):
 * byte escapes (`\xHH`, octal `\303`, a run decoded together as UTF-8), code points (`\uHHHH`,
 * `\u{…}`, `\x{…}`, `\UHHHHHHHH`), a backslash-newline continuation (dropped with the next line's
 * indentation, as YAML's double-quoted and TOML's multi-line strings read it), and a backslash
 * before any other character (`\ `, `\"`, `\'`, `\/`, `\\`, `\n`…).
 */
const BACKSLASH =
  /(?:\\(?:x[0-9A-Fa-f]{1,2}(?![{])|[0-7]{1,3}))+|\\[ux]\{[0-9A-Fa-f]{1,6}\}|\\u[0-9A-Fa-f]{4}|\\U[0-9A-Fa-f]{8}|\\\r?\n[ \t]*|\\[^]/g;

/** `cat -v` notation: `M-C`, `M-^X` for bytes above 127, `^[` for control characters. */
const CARET = /(?:M-\^?[ -~]|\^[@-_?])+/g;

/** Quoted-printable (`=C3=B6`, uppercase hex as the standard writes it) and its soft line breaks. */
const QUOTED_PRINTABLE = /=(?:[0-9A-F]{2}(?:=[0-9A-F]{2})*|\r?\n)/g;

/**
 * What only quoted-printable text holds: an escaped byte above 127, an escaped `=`, two escapes in
 * a row, or a soft line break. `page=12` alone is left as it is.
 */
const LIKELY_QUOTED_PRINTABLE = /=(?:[89A-F][0-9A-F]|3D|[0-9A-F]{2}=[0-9A-F]{2}|\r?\n)/;

/** The characters without which none of the decoders can change a text. */
// eslint-disable-next-line no-control-regex -- control characters trigger the removal
const TRIGGER = /[\x00-\x08\x0b-\x1f\x7f-\x9f&%\\^\p{Default_Ignorable_Code_Point}]|M-/u;

/** Rounds of decoding: `%2540` needs two, a JSON string of a `printf %q` output three. */
const MAX_ROUNDS = 4;

/**
 * The view of `view` with every escaping and encoding layer above undone, repeatedly (an escape
 * of an escape is undone too), ANSI escapes and invisible characters removed. Text with none of
 * the trigger characters is returned as it is.
 */
export function decodeEscapes(view: TextView): TextView {
  if (!TRIGGER.test(view.text)) return view;
  let current = view;
  for (let round = 0; round < MAX_ROUNDS && TRIGGER.test(current.text); round++) {
    const next = current
      .replace(INVISIBLE, () => "")
      .replace(ENTITY, decodeEntity)
      .replace(PERCENT, decodePercent)
      .replace(BACKSLASH, decodeBackslash)
      .replace(CARET, decodeCaret);
    if (next === current) break;
    current = next;
  }
  return current.replace(INVISIBLE, () => "");
}

/** Quoted-printable decoded; kept apart from decodeEscapes, since `=AB` also shows in base64 text. */
export function decodeQuotedPrintable(view: TextView): TextView {
  if (!view.text.includes("=") || !LIKELY_QUOTED_PRINTABLE.test(view.text)) return view;
  return view.replace(QUOTED_PRINTABLE, (match) =>
    match[0].startsWith("=\n") || match[0].startsWith("=\r") ? "" : bytesToText(hexBytes(match[0], 1, 3)),
  );
}

/** How many bytes a UTF-8 sequence starting with `lead` has; 1 for ASCII and for invalid leads. */
function sequenceLength(lead: number): number {
  if (lead >= 0xc2 && lead <= 0xdf) return 2;
  if (lead >= 0xe0 && lead <= 0xef) return 3;
  if (lead >= 0xf0 && lead <= 0xf4) return 4;
  return 1;
}

function decodeEntity(match: RegExpExecArray): string | undefined {
  const body = match[0].slice(1).replace(/;$/, "");
  if (!body.startsWith("#")) return namedEntity(body);
  const hex = body[1] === "x" || body[1] === "X";
  const codePoint = Number.parseInt(body.slice(hex ? 2 : 1), hex ? 16 : 10);
  return codePoint <= 0x10ffff ? String.fromCodePoint(codePoint) : undefined;
}

function decodePercent(match: RegExpExecArray): string {
  const text = match[0];
  if (text[1] === "u") return String.fromCharCode(Number.parseInt(text.slice(2), 16));
  return bytesToText(hexBytes(text, 1, 3));
}

function decodeBackslash(match: RegExpExecArray): string {
  const text = match[0];
  const kind = text[1] as string;
  // A continuation first: `\` and a bare line break is 2 characters long too, and is dropped.
  if (kind === "\n" || kind === "\r") return "";
  if (text.length === 2) return SINGLE_ESCAPES[kind] ?? kind;
  if (text[2] === "{") return codePoint(text.slice(3, -1));
  if (kind === "u") return String.fromCharCode(Number.parseInt(text.slice(2), 16));
  if (kind === "U") return codePoint(text.slice(2));
  // A run of byte escapes: `\xHH` (one or two hex digits) and octal `\NNN`.
  const bytes: number[] = [];
  for (const escape of text.split("\\").slice(1)) {
    bytes.push(
      escape.startsWith("x") ? Number.parseInt(escape.slice(1), 16) : Number.parseInt(escape, 8) & 0xff,
    );
  }
  return bytesToText(bytes);
}

function decodeCaret(match: RegExpExecArray): string {
  const bytes: number[] = [];
  const text = match[0];
  for (let index = 0; index < text.length;) {
    let high = 0;
    if (text.startsWith("M-", index)) {
      high = 0x80;
      index += 2;
    }
    if (text[index] === "^") {
      const character = text.charCodeAt(index + 1);
      bytes.push(high | (character === 0x3f ? 0x7f : character - 0x40));
      index += 2;
    } else {
      bytes.push(high | text.charCodeAt(index));
      index += 1;
    }
  }
  return bytesToText(bytes);
}

const SINGLE_ESCAPES: Record<string, string> = {
  a: "\x07",
  b: "\x08",
  e: "\x1b",
  E: "\x1b",
  f: "\x0c",
  n: "\n",
  r: "\r",
  t: "\t",
  v: "\x0b",
};

function codePoint(hex: string): string {
  const value = Number.parseInt(hex, 16);
  return value <= 0x10ffff ? String.fromCodePoint(value) : "";
}

/** The bytes of `%HH%HH…`/`=HH=HH…`: two hex digits every `stride` characters from `first`. */
function hexBytes(text: string, first: number, stride: number): number[] {
  const bytes: number[] = [];
  for (let index = first; index < text.length; index += stride) {
    bytes.push(Number.parseInt(text.slice(index, index + 2), 16));
  }
  return bytes;
}

/**
 * Bytes as text: each valid UTF-8 sequence as its character, any other byte as the Latin-1
 * character of that number (Python's `'\xf6'` and JavaScript's `escape` write ö as one byte).
 */
export function bytesToText(bytes: readonly number[]): string {
  let text = "";
  for (let index = 0; index < bytes.length;) {
    const lead = bytes[index] as number;
    const length = sequenceLength(lead);
    let value = length === 1 ? lead : lead & (0xff >> (length + 1));
    let valid = length > 1 && index + length <= bytes.length;
    for (let next = 1; valid && next < length; next++) {
      const byte = bytes[index + next] as number;
      if ((byte & 0xc0) !== 0x80) valid = false;
      value = (value << 6) | (byte & 0x3f);
    }
    if (valid && value <= 0x10ffff && !(value >= 0xd800 && value <= 0xdfff)) {
      text += String.fromCodePoint(value);
      index += length;
    } else {
      text += String.fromCharCode(lead);
      index += 1;
    }
  }
  return text;
}
