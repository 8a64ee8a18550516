import { describe, expect, it } from "vitest";
import { SecretRedactor } from "../../src/secrets/secret-redactor.js";

// A backslash at a line's end continues the line: a shell script shown by `bash -v` or `cat`, a
// TOML multi-line string and a YAML double-quoted one read the two lines as one, and TOML and YAML
// drop the next line's indentation too.

const SECRET = "sk-live-93b1e07c55d2a4f8";

describe("a secret continued on the next line by a backslash", () => {
  const redactor = new SecretRedactor();
  redactor.add("api_key", SECRET);

  it.each([
    ["a shell line", `TOKEN=sk-live-93b1\\\ne07c55d2a4f8 ./deploy.sh\n`],
    ["a TOML multi-line string", `key = """\\\n    sk-live-93b1\\\n    e07c55d2a4f8"""\n`],
    ["a YAML double-quoted string", `key: "sk-live-93b1\\\n  e07c55d2a4f8"\n`],
    ["a line ending in CRLF", `key: "sk-live-93b1\\\r\n  e07c55d2a4f8"\r\n`],
  ])("masks it in %s", (_name, text) => {
    const masked = redactor.redact(text);
    expect(masked).toContain("[secret:api_key]");
    expect(masked).not.toContain("e07c55d2a4f8");
  });

  it("leaves other continued lines as they are", () => {
    const text = "./configure \\\n  --prefix=/usr \\\n  --enable-shared\n";
    expect(redactor.redact(text)).toBe(text);
  });
});
