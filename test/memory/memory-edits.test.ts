import { describe, expect, it } from "vitest";
import { addEntry, removePassage, replacePassage } from "../../src/memory/memory-edits.js";
import { addedSecrets } from "../../src/memory/secret-check.js";
import { SecretRedactor } from "../../src/secrets/secret-redactor.js";

describe("memory edits", () => {
  it("adds entries a blank line apart, once each", () => {
    const one = addEntry("", "  first  ");
    expect(one).toEqual({ ok: true, content: "first\n" });
    const two = addEntry("first\n", "second");
    expect(two).toEqual({ ok: true, content: "first\n\nsecond\n" });
    expect(addEntry("first\n\nsecond\n", "second")).toMatchObject({ ok: true, unchanged: true });
    expect(addEntry("first\n", "   ")).toMatchObject({ ok: false });
  });

  it("replaces and removes a passage found exactly once, and says why otherwise", () => {
    const content = "alpha one\n\nbeta two\n\ngamma three\n";
    expect(replacePassage(content, "beta two", "beta 2")).toEqual({
      ok: true,
      content: "alpha one\n\nbeta 2\n\ngamma three\n",
    });
    expect(removePassage(content, "beta two")).toEqual({ ok: true, content: "alpha one\n\ngamma three\n" });
    expect(removePassage(content, "alpha one")).toEqual({ ok: true, content: "beta two\n\ngamma three\n" });
    expect(replacePassage(content, "delta", "x")).toMatchObject({
      ok: false,
      message: expect.stringContaining("not in your memory"),
    });
    expect(replacePassage(content, "a", "x")).toMatchObject({
      ok: false,
      message: expect.stringContaining("more than once"),
    });
    expect(removePassage(content, "")).toMatchObject({ ok: false });
  });
});

describe("secrets in a memory", () => {
  const redactor = new SecretRedactor();
  redactor.add("deploy_key", "dk-7f3a91c2e4b8d6f0");

  it("finds a value added whole, encoded, or assembled from pieces", () => {
    const added = (before: string, after: string) => addedSecrets(before, after, redactor.redactText);
    expect(added("", "key dk-7f3a91c2e4b8d6f0")).toEqual(["deploy_key"]);
    expect(added("", Buffer.from("dk-7f3a91c2e4b8d6f0").toString("base64"))).toEqual(["deploy_key"]);
    expect(added("piece dk-7f3a9", "piece dk-7f3a91c2e4b8d6f0")).toEqual(["deploy_key"]);
  });

  it("lets a memory that already holds one be edited elsewhere, and a literal mask be written", () => {
    const held = "old dk-7f3a91c2e4b8d6f0\n\nnote";
    expect(addedSecrets(held, `${held}\n\nanother note`, redactor.redactText)).toEqual([]);
    expect(addedSecrets("", "the key is [secret:deploy_key]", redactor.redactText)).toEqual([]);
  });
});
