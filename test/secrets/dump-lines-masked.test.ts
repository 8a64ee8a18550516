import { execFileSync } from "node:child_process";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SecretRedactor } from "../../src/secrets/secret-redactor.js";
import { ToolHarness } from "../support/tool-harness.js";

// A dump prints 8 to 16 bytes a line, each line opened by its offset and most closed by a column
// of the same bytes as characters: a value longer than a line (an API token is 20 to 60 bytes) is
// split by the offset and the column, and came out with most of it readable in the column.

const SECRET = "ghp_R3alT0kenW1thMoreThan16Bytes";
const hex = Buffer.from(SECRET).toString("hex");

/** Every 6-character piece of the value and every 6-byte piece of its hex left in `output`. */
function piecesLeft(output: string): string[] {
  const flat = output.replace(/\s+/g, "").toLowerCase();
  const pieces: string[] = [];
  for (let at = 0; at + 6 <= SECRET.length; at++) {
    if (output.includes(SECRET.slice(at, at + 6))) pieces.push(SECRET.slice(at, at + 6));
  }
  for (let at = 0; at + 12 <= hex.length; at += 2) {
    if (flat.includes(hex.slice(at, at + 12))) pieces.push(hex.slice(at, at + 12));
  }
  return pieces;
}

let harness: ToolHarness;
beforeAll(() => {
  harness = new ToolHarness({ permissions: { allow: ["shell"] }, secrets: { token: SECRET } });
});
afterAll(() => harness.dispose());

const DUMPS = [
  "xxd",
  "xxd -g1",
  "xxd -g4",
  "xxd -u",
  "xxd -b",
  "xxd -c 8",
  "hexdump -C",
  "hexdump -b",
  "hexdump -c",
  "od -b",
  "od -c",
  "od -tx1",
  "od -tu1",
  "od -Ax -tx1z",
  "od -tx1 -w8",
  // A few groups a line after xxd's `offset:`.
  "xxd -c 5 -g 2",
  "xxd -g 16",
  // A column of 2 or 3 characters that read as a byte (`aaa`, `16B`).
  "xxd -u -g 1 -c 3",
  "xxd -c 2 -g 1",
  // Words of 2 or 4 bytes, little-endian: the bytes of each in the other order.
  "hexdump",
  "hexdump -x",
  "od -x",
  "od",
  "od -tx4",
  // Words without offsets, and words in decimal.
  "od -An -x",
  "od -An -tx2",
  "od -An -tx4",
  "od -An -tx8",
  "od -t x8",
  "od -An -o",
  "hexdump -d",
  "od -d",
  "od -tu2",
  "od -An -tu4",
  "od -An -tu8",
  "hexdump -v -e '/4 \"%08x \"'",
  // Characters without offsets.
  "od -An -c",
  // Little-endian words, the last one shorter and right-aligned in its place.
  "xxd -e",
  "xxd -e -g 8",
];

describe("a secret longer than a line of a dump", () => {
  it.each(DUMPS)("is masked whole in `%s`, at every offset in its lines", async (dump) => {
    // Offsets 0 to 16: the value starts at each place of a line, and of xxd's two-byte groups.
    const command = Array.from(
      { length: 17 },
      (_, offset) => `{ printf '${"a".repeat(offset)}%s tail.' {{secret:token}}; } | ${dump}`,
    ).join("; ");
    const result = await harness.call("shell", { command });

    expect(result).toMatchObject({ ok: true });
    expect(result.output.match(/\[secret:token\]/g)).toHaveLength(17);
    expect(piecesLeft(result.output)).toEqual([]);
    expect(piecesLeft(JSON.stringify(harness.events))).toEqual([]);
  });

  it("leaves the rest of the dump readable", async () => {
    const result = await harness.call("shell", {
      command: "{ printf 'before-the-token:%s:after-the-token-line' {{secret:token}}; } | xxd",
    });

    expect(result.output).toContain("[secret:token]");
    expect(result.output).toContain("before-the-token");
    expect(result.output).toMatch(/-line/);
  });
});

describe("text that merely starts its lines with hex", () => {
  const redactor = new SecretRedactor();
  redactor.add("token", SECRET);

  it("is left as it is (git log --oneline, checksums, a hex dump without the value)", () => {
    const text = [
      "a1b2c3d add fix for the parser",
      "0fe2d11 bad cafe",
      "d41d8cd98f00b204e9800998ecf8427e  empty.txt",
      "00000000: 6865 6c6c 6f0a                           hello.",
      "0000000 150 145 154 154 157 012",
      "0000000 6568 6c6c 0a6f",
      "0000000 062550 066154 005157",
      "0fe2d11: bad cafe",
      " 6568 6c6c 0a6f",
      "  PID  PPID  UID\n 1234   567 1000",
      "ports 8080 8443 9090 9443 and years 2024 2025 2026",
    ].join("\n");
    expect(redactor.redact(text)).toBe(text);
  });
});

describe("a secret with characters a dump's column shows as dots", () => {
  // `ö` is two bytes outside printable ASCII: the column reads `w..rd`, so only the bytes can be
  // matched, and the column's part of the value on the line it ends on must go with them.
  const value = "pass wörd+x:Z9-long-value";
  const redactor = new SecretRedactor();
  redactor.add("token", value);

  it.each(["xxd", "xxd -e", "xxd -g4", "hexdump -C", "od -Ax -tx1z"])(
    "is masked in `%s`, column too",
    (dump) => {
      const [program, ...args] = dump.split(" ") as [string, ...string[]];
      const output = execFileSync(program, args, { input: `${value} after` }).toString();
      const masked = redactor.redact(output);

      expect(masked).toContain("[secret:token]");
      expect(masked).not.toMatch(/long|value|Z9|w\.\.rd/);
    },
  );
});
