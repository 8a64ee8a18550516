import { describe, expect, it } from "vitest";
import { randomBytes } from "node:crypto";
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

  it("masks a long text it masked before with what it learned since, under the name it learned last", () => {
    const learning = new SecretRedactor();
    learning.add("token", "tok-123456");
    const output = `${"a line of tool output\n".repeat(20)}deploy key dk-7f3a91c2e4b8 and tok-123456\n`;
    const before = learning.redact(output);
    expect(before).toContain("dk-7f3a91c2e4b8");
    expect(learning.redact(output)).toBe(before);

    learning.add("deploy", "dk-7f3a91c2e4b8");
    expect(learning.redact(output)).toBe(before.replace("dk-7f3a91c2e4b8", "[secret:deploy]"));
    // The same value learned under another name: the same text shows that name now.
    learning.add("renamed", "dk-7f3a91c2e4b8");
    expect(learning.redact(output)).toContain("[secret:renamed]");
    expect(learning.redact(output)).not.toContain("[secret:deploy]");
  });
});

describe("SecretRedactor on normalised output", () => {
  const secret = 'p@ss wörd/+"x:Z9-long';
  const redactor = new SecretRedactor();
  redactor.add("k", secret);

  it("masks the span the value came from, escapes inside it included, and keeps the rest as it was", () => {
    const colour = `found: p@ss w\x1b[01;31m\x1b[Körd\x1b[m\x1b[K/+"x:Z9-long (line 3)`;
    expect(redactor.redact(colour)).toBe("found: [secret:k] (line 3)");
    const csv = `id,"p@ss wörd/+""x:Z9-long",42`;
    expect(redactor.redact(csv)).toBe('id,"[secret:k]",42');
    const percent = `GET /?q=${[...Buffer.from(secret)].map((byte) => `%${byte.toString(16)}`).join("")}&x=1`;
    expect(redactor.redact(percent)).toBe("GET /?q=[secret:k]&x=1");
    expect(redactor.redact(`A ${secret.toUpperCase()} B`)).toBe("A [secret:k] B");
  });

  it("masks a value base64-encoded inside a JSON string with \\/ escapes", () => {
    const encoded = Buffer.from(`xx${secret}`).toString("base64").replaceAll("/", "\\/");
    const masked = redactor.redact(`{"blob":"${encoded}"}`);
    expect(masked).toContain("[secret:k]");
    expect(masked).not.toContain(encoded.slice(4, 20));
  });

  it("masks the beginning of a value cut by a cap, in another case", () => {
    expect(redactor.redactCutEnd("output: P@SS WÖR")).toBe("output: [secret:k…]");
    expect(redactor.redactCutStart('D/+"X:Z9-LONG and more')).toBe("[secret:k…] and more");
  });

  it("does not learn values shorter than 4 characters, in any form", () => {
    const short = new SecretRedactor();
    short.add("pin", "a1");
    expect(short.redact("A1 a1 %61%31 YTE=")).toBe("A1 a1 %61%31 YTE=");
  });

  it("leaves ordinary text with escapes, quotes and colours as it was", () => {
    const text = `it's "100% done" \x1b[1mbold\x1b[0m C:\\new &amp; 0x41 page=12`;
    expect(redactor.redact(text)).toBe(text);
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

  it("names each secret once, in the order the value holds them, and leaves the value as it was", () => {
    const value = {
      command: "deploy --token {{secret:deploy}}",
      steps: [{ env: ["A={{secret:aws}}", "B={{secret:deploy}}"] }, null, true, 1.5],
      note: "secret: not a reference, {{secret:}} neither",
    };
    const before = structuredClone(value);
    expect(secretNamesIn(value)).toEqual(["deploy", "aws"]);
    expect(value).toEqual(before);
    expect(secretNamesIn("plain text")).toEqual([]);
  });
});

describe("a long secret (a kubeconfig, a certificate chain, a service account's JSON)", () => {
  // Before: one alternation of a value's forms; its binary form alone (8 characters a byte) passed
  // V8's limit from about 4 KB on, and every redaction of a longer text threw "Regular expression
  // too large" (a vault key file with a zeroed tail crashed the daemon at its first run).
  it("is masked in every form, without throwing, at 4 KB and 64 KB", () => {
    for (const length of [4_200, 65_536]) {
      const value = randomBytes(length).toString("base64").slice(0, length);
      const redactor = new SecretRedactor();
      redactor.add("kubeconfig", value);
      redactor.add("token", "sk-short-secret-value-123");
      const text = `before ${value} middle ${Buffer.from(value).toString("hex")} sk-short-secret-value-123 after ${"z".repeat(10_000)}`;
      const masked = redactor.redact(text);
      expect(masked).not.toContain(value.slice(0, 64));
      expect(masked).not.toContain(Buffer.from(value).toString("hex").slice(0, 64));
      expect(
        masked.startsWith("before [secret:kubeconfig] middle [secret:kubeconfig] [secret:token] after"),
      ).toBe(true);
      expect(redactor.redactValue({ nested: [`x ${value} y`] })).toEqual({
        nested: ["x [secret:kubeconfig] y"],
      });
    }
  });
});
