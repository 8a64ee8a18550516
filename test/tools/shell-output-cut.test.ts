import { describe, expect, it } from "vitest";
import { SecretRedactor } from "../../src/secrets/secret-redactor.js";
import { CappedCollector } from "../../src/tools/builtin/capped-collector.js";

const SECRET = "tok-4f9a2c7e1b";

function redactorKnowing(): SecretRedactor {
  const redactor = new SecretRedactor();
  redactor.add("api", SECRET);
  return redactor;
}

const pieceRedactor = (redactor: SecretRedactor) => (text: string, cutAt: "end" | "start") => {
  const whole = redactor.redact(text);
  return cutAt === "end" ? redactor.redactCutEnd(whole) : redactor.redactCutStart(whole);
};

describe("a command's output cut to its beginning and end", () => {
  it("masks a secret cut in two at either side of the gap", () => {
    const redactor = redactorKnowing();
    // 100-byte budget: the first 50 and the last 50 bytes are shown.
    for (let offset = 40; offset < 52; offset++) {
      const collector = new CappedCollector(100);
      collector.push(Buffer.from(`${"a".repeat(offset)}${SECRET}${"b".repeat(300)}`));
      collector.push(Buffer.from(`${"c".repeat(300)}${SECRET.slice(0, 3)}`));
      const tailSplit = new CappedCollector(100);
      tailSplit.push(Buffer.from(`${"d".repeat(500)}${SECRET}${"e".repeat(50 - offset + 40)}`));
      for (const shown of [
        collector.text(100, pieceRedactor(redactor)),
        tailSplit.text(100, pieceRedactor(redactor)),
      ]) {
        expect(shown).toContain("bytes cut");
        for (let length = 4; length <= SECRET.length; length++) {
          expect(shown).not.toContain(SECRET.slice(0, length));
          expect(shown).not.toContain(SECRET.slice(-length));
        }
      }
    }
  });

  it("leaves output alone that only looks like the start of nothing known", () => {
    const redactor = redactorKnowing();
    const collector = new CappedCollector(100);
    collector.push(Buffer.from(`${"x".repeat(400)}`));
    expect(collector.text(100, pieceRedactor(redactor))).toBe(
      `${"x".repeat(50)}\n[… 300 bytes cut …]\n${"x".repeat(50)}`,
    );
  });

  it("masks the longest piece when the cut leaves parts of two values that overlap", () => {
    const redactor = new SecretRedactor();
    redactor.add("a", "efgh-secret-A-rest");
    redactor.add("b", "ABCDefgh-secret-B-rest");
    expect(redactor.redactCutEnd("output ABCDefgh")).toBe("output [secret:b…]");
    expect(redactor.redactCutStart("B-rest and more")).toBe("[secret:b…] and more");
    expect(redactor.redactCutEnd("nothing known here")).toBe("nothing known here");
  });
});
