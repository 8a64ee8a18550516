import { describe, expect, it } from "vitest";
import { SecretRedactor } from "../../src/secrets/secret-redactor.js";
import { secretNamesIn, substituteSecrets } from "../../src/secrets/secret-template.js";

describe("SecretRedactor", () => {
  const secret = 'p@ss "word"/with+chars';
  const redactor = new SecretRedactor();
  redactor.add("db", secret);
  redactor.add("token", "tok-123456");

  it("masks a value as-is, JSON-escaped, URL-encoded and in base64", () => {
    const encoded = [
      secret,
      JSON.stringify({ password: secret }),
      `https://x/?p=${encodeURIComponent(secret)}`,
      Buffer.from(secret).toString("base64"),
      Buffer.from(secret).toString("base64url"),
    ];
    for (const text of encoded) {
      const masked = redactor.redact(`before ${text} after`);
      expect(masked).toContain("[secret:db]");
      expect(masked).not.toContain(secret);
      expect(masked).not.toContain(encodeURIComponent(secret));
    }
  });

  it("masks event drafts deeply and log lines, through functions fitting the bus and logger hooks", () => {
    const draft = redactor.redactEvent({
      agent: "a",
      run: "r_1",
      type: "observation",
      data: { call_id: "c", tool: "shell", ok: true, output: "got tok-123456", duration_ms: 1 },
    });
    expect(JSON.stringify(draft)).not.toContain("tok-123456");
    expect(redactor.redactText('{"msg":"tok-123456"}\n')).toBe('{"msg":"[secret:token]"}\n');
  });

  it("leaves text without secrets unchanged", () => {
    expect(redactor.redact("nothing to hide here")).toBe("nothing to hide here");
  });
});

describe("secret templates", () => {
  it("finds and substitutes {{secret:name}} deeply", () => {
    const value = { headers: { authorization: "Bearer {{secret:gh}}" }, list: ["{{ secret:db }}", 3] };
    expect(secretNamesIn(value).sort()).toEqual(["db", "gh"]);
    expect(substituteSecrets(value, (name) => `<${name}>`)).toEqual({
      headers: { authorization: "Bearer <gh>" },
      list: ["<db>", 3],
    });
  });
});
