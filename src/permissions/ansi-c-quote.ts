const SIMPLE_ESCAPES: Record<string, string> = {
  a: "\x07",
  b: "\b",
  e: "\x1b",
  E: "\x1b",
  f: "\f",
  n: "\n",
  r: "\r",
  t: "\t",
  v: "\v",
  "\\": "\\",
  "'": "'",
  '"': '"',
  "?": "?",
};

/** Decoded text of a bash `$'...'` body, or undefined when it uses an escape this decoder does not know. */
export function decodeAnsiCQuoted(body: string): string | undefined {
  let decoded = "";
  for (let index = 0; index < body.length; index++) {
    const character = body[index] as string;
    if (character !== "\\") {
      decoded += character;
      continue;
    }
    const next = body[index + 1];
    if (next === undefined) return undefined;
    const simple = SIMPLE_ESCAPES[next];
    if (simple !== undefined) {
      decoded += simple;
      index++;
      continue;
    }
    const numeric = decodeNumericEscape(body, index + 1);
    if (!numeric) return undefined;
    decoded += numeric.text;
    index = numeric.end - 1;
  }
  return decoded;
}

function decodeNumericEscape(body: string, start: number): { text: string; end: number } | undefined {
  const kind = body[start];
  const forms: Array<[string, RegExp, number]> = [
    ["x", /^[0-9a-fA-F]{1,2}/, 16],
    ["u", /^[0-9a-fA-F]{1,4}/, 16],
    ["U", /^[0-9a-fA-F]{1,8}/, 16],
  ];
  for (const [prefix, digits, radix] of forms) {
    if (kind !== prefix) continue;
    const match = digits.exec(body.slice(start + 1));
    if (!match) return undefined;
    const codePoint = Number.parseInt(match[0], radix);
    if (codePoint > 0x10ffff) return undefined;
    return { text: String.fromCodePoint(codePoint), end: start + 1 + match[0].length };
  }
  const octal = /^[0-7]{1,3}/.exec(body.slice(start));
  if (octal) {
    return { text: String.fromCharCode(Number.parseInt(octal[0], 8) & 0xff), end: start + octal[0].length };
  }
  return undefined;
}
