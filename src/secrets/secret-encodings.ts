import { wholeValueEncodings } from "./whole-value-encodings.js";

/**
 * The forms a secret value takes when a tool or a program encodes it by itself, each of which the
 * redactor masks: `written` are the value as text (as written, JSON-escaped, percent-encoded),
 * matched exactly as well as through the normalised view of the output (SecretRedactor);
 * `encoded` are binary-to-text encodings of its bytes whose case matters (base64, base64url,
 * binary), and `caseless` those whose case does not (base32, base32hex, hex), in lowercase;
 * both are matched in the decoded output with wrapped lines joined, the caseless ones lowercased;
 * `printed` are the encodings matched exactly in the output as printed (wholeValueEncodings:
 * Ascii85, base85, Z85, base58, uuencode); `decimal` is its bytes as decimal numbers
 * (`112,64,115`, and signed: `-61,-74`) and the value as one number, matched where output lists
 * bytes, and
 * `octal` as three-digit octal numbers (`160,100,163`: `od -b`), matched where output lists those. A
 * deliberate transformation (reversed, split, encrypted) is not here: keeping a value the agent
 * was never given out of its reach is the sandbox's job.
 */
export function secretForms(value: string): {
  written: string[];
  printed: string[];
  encoded: string[];
  caseless: string[];
  decimal: string[];
  octal: string;
} {
  const bytes = Buffer.from(value, "utf8");
  const whole = wholeValueEncodings(bytes);
  return {
    written: [value, ...jsonForms(value), ...percentForms(value)],
    printed: whole.exact,
    encoded: [
      ...base64Forms(bytes, "base64"),
      ...base64Forms(bytes, "base64url"),
      binary(bytes, false),
      binary(bytes, true),
    ],
    caseless: [...base32Forms(bytes, BASE32), ...base32Forms(bytes, BASE32_HEX), bytes.toString("hex")],
    decimal: [
      [...bytes].join(","),
      [...bytes].map((byte) => (byte >= 128 ? byte - 256 : byte)).join(","),
      whole.decimal,
    ],
    octal: [...bytes].map((byte) => byte.toString(8).padStart(3, "0")).join(","),
  };
}

/** RFC 4648 base32 (`base32`, Python's `b32encode`, TOTP keys) and its extended-hex alphabet. */
const BASE32 = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567";
const BASE32_HEX = "0123456789ABCDEFGHIJKLMNOPQRSTUV";

/** Shortest run of base32 characters, from a value at a shifted byte alignment, worth masking. */
const MIN_ALIGNED_BASE32_LENGTH = 8;

/** Shortest run of base64 characters, from a value at a shifted byte alignment, worth masking. */
const MIN_ALIGNED_BASE64_LENGTH = 6;

/** JSON string bodies: as JSON.stringify writes them, with `\/`, and ASCII-only (`\u00fc`, Python's default). */
function jsonForms(value: string): string[] {
  const escaped = JSON.stringify(value).slice(1, -1);
  const asciiOnly = (upper: boolean) =>
    escaped.replace(/[^\x20-\x7e]/g, (character) => {
      const hex = character.charCodeAt(0).toString(16).padStart(4, "0");
      return `\\u${upper ? hex.toUpperCase() : hex}`;
    });
  return [escaped, escaped.replaceAll("/", "\\/"), asciiOnly(false), asciiOnly(true)];
}

/**
 * Percent-encodings: JavaScript's encodeURIComponent, a form body (URLSearchParams, `+` for a
 * space), what the WHATWG URL parser — and so `fetch` — writes in a path, query, fragment and user
 * info (`p@ss word` → `p@ss%20word`), Python's `quote` and `quote_plus`, and lowercase hex digits.
 */
function percentForms(value: string): string[] {
  const url = new URL("http://host/");
  const inUrl = (part: "pathname" | "search" | "hash" | "username" | "password") => {
    url[part] = part === "pathname" ? `/${value}` : value;
    return part === "username" || part === "password" ? url[part] : url[part].slice(1);
  };
  const forms = [
    encodeURIComponent(value),
    new URLSearchParams({ value }).toString().slice("value=".length),
    inUrl("pathname"),
    inUrl("search"),
    inUrl("hash"),
    inUrl("username"),
    inUrl("password"),
    percentEncode(value, /[A-Za-z0-9_.\-~/]/, false),
    percentEncode(value, /[A-Za-z0-9_.\-~]/, true),
  ];
  return [...forms, ...forms.map((form) => form.replace(/%[0-9A-F]{2}/g, (hex) => hex.toLowerCase()))];
}

/** Percent-encodes every UTF-8 byte of a character outside `safe`; `plus` writes a space as `+`. */
function percentEncode(value: string, safe: RegExp, plus: boolean): string {
  let encoded = "";
  for (const character of value) {
    if (safe.test(character)) encoded += character;
    else if (plus && character === " ") encoded += "+";
    else {
      for (const byte of Buffer.from(character, "utf8")) {
        encoded += `%${byte.toString(16).toUpperCase().padStart(2, "0")}`;
      }
    }
  }
  return encoded;
}

/**
 * base64 of the value alone (with and without padding), and the characters that stand for the value
 * inside a longer encoded text, at each of the three byte alignments it can start at
 * (`user:secret` for HTTP Basic authentication puts it at the second): the characters that also
 * carry bits of the neighbouring bytes are left out, the rest is the same whatever surrounds it.
 */
function base64Forms(bytes: Buffer, encoding: "base64" | "base64url"): string[] {
  const alone = bytes.toString(encoding);
  const forms = [alone, alone.replace(/=+$/, "")];
  for (const shift of [0, 1, 2]) {
    const shifted = Buffer.concat([Buffer.alloc(shift), bytes]).toString(encoding);
    const first = Math.ceil((shift * 8) / 6);
    const end = Math.floor(((shift + bytes.length) * 8) / 6);
    const core = shifted.slice(first, end);
    if (core.length >= MIN_ALIGNED_BASE64_LENGTH) forms.push(core);
  }
  return forms;
}

/**
 * base32 of the value alone (padded and not) and, at each of the five byte alignments a value can
 * start at inside a longer encoded text, the characters that stand for it alone; in lowercase
 * (both cases are written, and decoders accept both: the redactor matches them lowercased).
 */
function base32Forms(bytes: Buffer, alphabet: string): string[] {
  const alone = base32(bytes, alphabet);
  const forms = [alone, alone.replace(/=+$/, "")];
  for (const shift of [0, 1, 2, 3, 4]) {
    const shifted = base32(Buffer.concat([Buffer.alloc(shift), bytes]), alphabet);
    const core = shifted.slice(Math.ceil((shift * 8) / 5), Math.floor(((shift + bytes.length) * 8) / 5));
    if (core.length >= MIN_ALIGNED_BASE32_LENGTH) forms.push(core);
  }
  return forms.map((form) => form.toLowerCase());
}

function base32(bytes: Buffer, alphabet: string): string {
  let encoded = "";
  let value = 0;
  let bits = 0;
  for (const byte of bytes) {
    value = ((value << 8) | byte) & 0xfff;
    bits += 8;
    while (bits >= 5) {
      encoded += alphabet[(value >>> (bits - 5)) & 31];
      bits -= 5;
    }
  }
  if (bits > 0) encoded += alphabet[(value << (5 - bits)) & 31];
  return encoded.padEnd(Math.ceil(encoded.length / 8) * 8, "=");
}

/** The bits of each byte as `0` and `1` (`basenc --base2msbf`, `--base2lsbf`). */
function binary(bytes: Buffer, leastSignificantFirst: boolean): string {
  let encoded = "";
  for (const byte of bytes) {
    const bits = byte.toString(2).padStart(8, "0");
    encoded += leastSignificantFirst ? [...bits].reverse().join("") : bits;
  }
  return encoded;
}
