import { execFileSync } from "node:child_process";
import { describe, expect, it } from "vitest";
import { SecretRedactor } from "../../src/secrets/secret-redactor.js";

// `od -c` is a common way to look at a file, and a program printing a list of a string's
// characters prints them one by one on its own: the value is whole, only spaced out.

const SECRET = "ghp_R3alT0kenW1thMoreThan16Bytes";

/** What a program prints for `before SECRET after` on its stdin. */
const printed = (program: string, ...args: string[]) =>
  execFileSync(program, args, { input: `before ${SECRET} after` }).toString();

/** Every 4-character piece of the value still readable once the spacing is taken out. */
function piecesLeft(output: string): string[] {
  const flat = output.replace(/[\s'",]/g, "");
  const pieces: string[] = [];
  for (let at = 0; at + 4 <= SECRET.length; at++) {
    if (flat.includes(SECRET.slice(at, at + 4))) pieces.push(SECRET.slice(at, at + 4));
  }
  return pieces;
}

describe("a secret printed one character at a time", () => {
  const redactor = new SecretRedactor();
  redactor.add("token", SECRET);

  it.each([
    ["od -An -c", () => printed("od", "-An", "-c")],
    ["od -An -tc", () => printed("od", "-An", "-tc")],
    ["od -An -a", () => printed("od", "-An", "-a")],
    ["od -An -c -w7", () => printed("od", "-An", "-c", "-w7")],
    ["Python's list(s)", () => printed("python3", "-c", "import sys; print(list(sys.stdin.read()))")],
    ["Node's [...s]", () => printed("node", "-e", "console.log([...require('fs').readFileSync(0, 'utf8')])")],
    [
      "JSON of [...s]",
      () => printed("node", "-e", "console.log(JSON.stringify([...require('fs').readFileSync(0, 'utf8')]))"),
    ],
  ])("masks %s, and only the value", (_name, print) => {
    const masked = redactor.redact(print());
    expect(masked).toContain("[secret:token]");
    expect(piecesLeft(masked)).toEqual([]);
    expect(masked.replace(/[\s'",]/g, "")).toMatch(/before.*\[secret:token\].*after/);
  });

  it("masks a value with a blank and a character outside ASCII in od -c and hexdump -c", () => {
    const value = "pass wörd+x:Z9-long-value";
    const wide = new SecretRedactor();
    wide.add("token", value);
    for (const [program, ...args] of [
      ["od", "-c"],
      ["hexdump", "-c"],
      ["od", "-An", "-c"],
    ] as const) {
      const output = execFileSync(program, args, { input: `${value} tail` }).toString();
      const masked = wide.redact(output);
      expect(masked).toContain("[secret:token]");
      expect(masked.replace(/\s+/g, "")).not.toMatch(/long|pass|Z9/);
    }
  });

  it("leaves other spaced characters alone", () => {
    const text = [
      "   a   b   c   d   e",
      "x = 1 + 2 * 3",
      "['a', 'b', 'c', 'd']",
      '["red", "green", "blue"]',
      "0000000   h   e   l   l   o  \\n",
    ].join("\n");
    expect(redactor.redact(text)).toBe(text);
  });
});
