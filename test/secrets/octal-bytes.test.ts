import { execFileSync } from "node:child_process";
import { describe, expect, it } from "vitest";
import { SecretRedactor } from "../../src/secrets/secret-redactor.js";

const SECRET = "sk-live-93b1e07c55d2a4f8";

/** What a program prints for SECRET on its stdin. */
const printed = (program: string, ...args: string[]) =>
  execFileSync(program, args, { input: SECRET }).toString();

describe("a secret's bytes in octal, as dumps print them", () => {
  const redactor = new SecretRedactor();
  redactor.add("api_key", SECRET);

  it.each([
    ["od -An -b", printed("od", "-An", "-b")],
    ["od -An -to1", printed("od", "-An", "-to1")],
    ["od -An -b -w32", printed("od", "-An", "-b", "-w32")],
    [
      "a list of octal bytes",
      [...Buffer.from(SECRET)].map((byte) => byte.toString(8).padStart(3, "0")).join(", "),
    ],
  ])("masks %s", (_name, output) => {
    const masked = redactor.redact(output);
    expect(masked).toContain("[secret:api_key]");
    expect(masked).not.toMatch(/163 153 055 154/);
  });

  it("leaves other octal numbers alone", () => {
    const text = "mode 644 755 600 700 and bytes 101 102 103 104";
    expect(redactor.redact(text)).toBe(text);
  });
});

describe("a secret's bytes as signed decimal numbers", () => {
  // A byte above 127 is negative in Java's `byte` and in `od -td1`: only a value outside ASCII has one.
  const value = "pass wörd+x:Z9-long-value";
  const redactor = new SecretRedactor();
  redactor.add("passphrase", value);
  const signed = [...Buffer.from(value)].map((byte) => (byte >= 128 ? byte - 256 : byte));

  it.each([
    ["od -An -td1", execFileSync("od", ["-An", "-td1"], { input: value }).toString()],
    ["Java's Arrays.toString(bytes)", `[${signed.join(", ")}]`],
  ])("masks %s", (_name, output) => {
    const masked = redactor.redact(output);
    expect(masked).toContain("[secret:passphrase]");
    expect(masked).not.toMatch(/-61/);
  });

  it("leaves other negative numbers alone", () => {
    const text = "deltas: -1, -2, -3, -4, 5, -61, -74";
    expect(redactor.redact(text)).toBe(text);
  });
});
