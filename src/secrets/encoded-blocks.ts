import { type TextView, ViewBuilder } from "./text-view.js";

/** uuencode's block: `begin 644 name`, lines of a length character and groups, `end`. */
const UUENCODE_BLOCK = /^begin [0-7]{3,4} [^\n]*\r?\n([\s\S]*?)^end\r?$/gm;
/** An Ascii85 block between Adobe's delimiters (`base64.a85encode(…, adobe=True)`, PDF, PostScript). */
const ASCII85_BLOCK = /<~([!-uz\s]*)~>/g;

/**
 * The view of the uuencode blocks (`uuencode file`) and Ascii85 blocks (`<~…~>`) in `view`, each
 * decoded to its bytes in lowercase hex, so a value is found at any byte alignment and across the
 * block's lines; text outside the blocks is dropped (a line break in its place). A match maps back
 * to the groups of characters it came from. Undefined when the text has no block.
 */
export function encodedBlocksView(view: TextView): TextView | undefined {
  const text = view.text;
  // `includes` first: a tenth of a regex's cost on text without a block, which is most text.
  const blocks: Array<Array<[number, number, string]>> = [];
  if (text.includes("begin ")) collect(text, UUENCODE_BLOCK, uudecodeGroups, blocks);
  if (text.includes("<~")) collect(text, ASCII85_BLOCK, ascii85Groups, blocks);
  if (blocks.length === 0) return undefined;
  blocks.sort(
    (left, right) => (left[0] as [number, number, string])[0] - (right[0] as [number, number, string])[0],
  );
  const builder = new ViewBuilder(view);
  let position = 0;
  for (const groups of blocks) {
    const [first] = groups[0] as [number, number, string];
    if (first < position) continue;
    builder.replace(position, first, "\n");
    for (const [index, [start, end, hex]] of groups.entries()) {
      if (index > 0) builder.replace((groups[index - 1] as [number, number, string])[1], start, "");
      builder.replace(start, end, hex);
    }
    position = (groups[groups.length - 1] as [number, number, string])[1];
  }
  builder.replace(position, text.length, "\n");
  return builder.finish();
}

function collect(
  text: string,
  pattern: RegExp,
  decode: (text: string, start: number, end: number) => Array<[number, number, string]>,
  blocks: Array<Array<[number, number, string]>>,
): void {
  pattern.lastIndex = 0;
  for (let match = pattern.exec(text); match !== null; match = pattern.exec(text)) {
    const body = match[1] ?? "";
    const start = match.index + match[0].indexOf(body);
    const groups = decode(text, start, start + body.length);
    if (groups.length > 0) blocks.push(groups);
  }
}

/** Each uuencoded group of 4 characters (`start`, `end`) as its bytes in hex, line by line. */
function uudecodeGroups(text: string, start: number, end: number): Array<[number, number, string]> {
  const groups: Array<[number, number, string]> = [];
  for (let lineStart = start; lineStart < end;) {
    const newline = text.indexOf("\n", lineStart);
    const lineEnd = newline === -1 || newline > end ? end : newline;
    let count = (text.charCodeAt(lineStart) - 32) & 63;
    for (let at = lineStart + 1; count > 0 && at + 4 <= lineEnd; at += 4) {
      const value = [0, 1, 2, 3].reduce(
        (bits, offset) => (bits << 6) | ((text.charCodeAt(at + offset) - 32) & 63),
        0,
      );
      const bytes = [value >> 16, (value >> 8) & 255, value & 255].slice(0, Math.min(3, count));
      count -= bytes.length;
      groups.push([at, at + 4, bytes.map((byte) => byte.toString(16).padStart(2, "0")).join("")]);
    }
    lineStart = lineEnd + 1;
  }
  return groups;
}

/** Each Ascii85 group (5 characters, `z` for 4 zero bytes, blanks skipped) as its bytes in hex. */
function ascii85Groups(text: string, start: number, end: number): Array<[number, number, string]> {
  const groups: Array<[number, number, string]> = [];
  let digits: number[] = [];
  let groupStart = start;
  const flush = (groupEnd: number) => {
    const count = digits.length;
    while (digits.length < 5) digits.push(84);
    const value = digits.reduce((total, digit) => total * 85 + digit, 0);
    if (value <= 0xffffffff) {
      const hex = value
        .toString(16)
        .padStart(8, "0")
        .slice(0, (count - 1) * 2);
      groups.push([groupStart, groupEnd, hex]);
    }
    digits = [];
  };
  for (let at = start; at < end; at++) {
    const code = text.charCodeAt(at);
    if (code === 122 && digits.length === 0) {
      groups.push([at, at + 1, "00000000"]);
      continue;
    }
    if (code < 33 || code > 117) continue;
    if (digits.length === 0) groupStart = at;
    digits.push(code - 33);
    if (digits.length === 5) flush(at + 1);
  }
  if (digits.length > 1) flush(end);
  return groups;
}
