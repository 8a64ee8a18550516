import { execFileSync } from "node:child_process";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SecretRedactor } from "../../src/secrets/secret-redactor.js";
import { ToolHarness } from "../support/tool-harness.js";

// Encodings a program prints when told to encode a value: their alphabets hold quotes,
// backslashes and blanks, so they are matched as printed.

const SECRET = "ghp_R3alT0kenW1thMoreThan16Bytes";

/** What Python prints for `expression` of `value` (bytes). */
const python = (expression: string) =>
  execFileSync(
    "python3",
    ["-c", `import base64, binascii, sys; value = sys.stdin.buffer.read(); ${expression}`],
    {
      input: SECRET,
    },
  ).toString();

describe("a secret in an encoding a program prints", () => {
  const redactor = new SecretRedactor();
  redactor.add("token", SECRET);

  it.each([
    ["Ascii85 (base64.a85encode)", () => python("print(base64.a85encode(value).decode())")],
    ["Ascii85 between <~ ~>", () => python("print(base64.a85encode(value, adobe=True).decode())")],
    ["base85 (base64.b85encode, git)", () => python("print(base64.b85encode(value).decode())")],
    [
      "Z85",
      () =>
        python(
          "t = bytes.maketrans(b'0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz!#$%&()*+-;<=>?@^_`{|}~', b'0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ.-:+=^!/*?&<>()[]{}@%$#'); print(base64.b85encode(value).translate(t).decode())",
        ),
    ],
    [
      "base58",
      () =>
        python(
          "n = int.from_bytes(value, 'big'); a = '123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz'; s = ''\nwhile n: n, r = divmod(n, 58); s = a[r] + s\nprint(s)",
        ),
    ],
    ["uuencode (binascii.b2a_uu)", () => python("sys.stdout.write(binascii.b2a_uu(value).decode())")],
    [
      "uuencode (Perl's pack 'u')",
      () => execFileSync("perl", ["-e", "print pack('u', <STDIN>)"], { input: SECRET }).toString(),
    ],
    ...[1, 2, 3].map((shift): [string, () => string] => [
      `uuencode of a file holding it ${shift} bytes in`,
      () =>
        python(
          `data = b'token=${"x".repeat(shift)}' + value + b'\\n'\nsys.stdout.write('begin 644 f\\n' + ''.join(binascii.b2a_uu(data[at:at + 45], backtick=True).decode() for at in range(0, len(data), 45)) + '\`\\nend\\n')`,
        ),
    ]),
    ...[1, 2, 3].map((shift): [string, () => string] => [
      `Ascii85 between <~ ~> of data holding it ${shift} bytes in, wrapped as PDF wraps it`,
      () =>
        python(
          `print(base64.a85encode(b'token=${"x".repeat(shift)}' + value + b';', adobe=True, wrapcol=20).decode())`,
        ),
    ]),
    ["the value as one number (int.from_bytes)", () => python("print(int.from_bytes(value, 'big'))")],
  ])("masks %s", (_name, print) => {
    const output = print();
    const masked = redactor.redact(output);
    expect(masked).toContain("[secret:token]");
    // Left beside the mask: a line's length character, delimiters, "token=" (the value alone is 40).
    const longestLeft = Math.max(
      ...masked.split("[secret:token]").flatMap((part) => part.split(/\s+/).map((run) => run.length)),
    );
    expect(longestLeft).toBeLessThan(16);
  });

  it("masks uuencode of a file holding it across two of its 45-byte lines", () => {
    const output = python(
      "data = b'token=' + b'x' * 30 + value + b'\\n'\nsys.stdout.write('begin 644 f\\n' + ''.join(binascii.b2a_uu(data[at:at + 45], backtick=True).decode() for at in range(0, len(data), 45)) + '`\\nend\\n')",
    );
    const masked = redactor.redact(output).split("\n");
    // The first line holds "token=", the x's and the value's first 9 bytes; the second the rest.
    expect(masked[0]).toBe("begin 644 f");
    expect(masked[1]).toMatch(/^M.{40,}\[secret:token\]$/);
    expect(masked.slice(2)).toEqual(["`", "end", ""]);
  });
});

describe("a secret a shell tool call encodes", () => {
  let harness: ToolHarness;
  beforeAll(() => {
    harness = new ToolHarness({ permissions: { allow: ["shell"] }, secrets: { token: SECRET } });
  });
  afterAll(() => harness.dispose());

  it.each([
    ["Ascii85", "import base64, sys; print(base64.a85encode(sys.argv[1].encode()).decode())"],
    ["uuencode", "import binascii, sys; sys.stdout.write(binascii.b2a_uu(sys.argv[1].encode()).decode())"],
  ])("reaches the model and the events masked in %s", async (_name, program) => {
    const encoded = execFileSync("python3", ["-c", program, SECRET]).toString().trim();
    const result = await harness.call("shell", { command: `python3 -c '${program}' {{secret:token}}` });

    expect(result).toMatchObject({ ok: true });
    expect(result.output).toContain("[secret:token]");
    expect(result.output).not.toContain(encoded.slice(1, -1));
    expect(JSON.stringify(harness.events)).not.toContain(JSON.stringify(encoded.slice(1, -1)).slice(1, -1));
  });
});
