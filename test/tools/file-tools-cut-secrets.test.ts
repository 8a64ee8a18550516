import { writeFileSync } from "node:fs";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { ToolHarness } from "../support/tool-harness.js";

const SECRET = "sk-live-0123456789abcdefghijklmnopqrstuv";
/** Characters of a matching line search_files shows before cutting it. */
const SHOWN_LINE_CHARACTERS = 300;
const MAX_OUTPUT_BYTES = 1000;

let harness: ToolHarness;

/** Fails when any 4+ character beginning of the secret shows in the text. */
function expectNoSecretPrefix(text: string): void {
  for (let length = 4; length <= SECRET.length; length++) {
    expect(text).not.toContain(SECRET.slice(0, length));
  }
}

describe("file tools that cut a line inside a known secret", () => {
  beforeEach(async () => {
    harness = new ToolHarness({
      permissions: { allow: ["read_file", "search_files", "shell"] },
      secrets: { k: SECRET },
      settings: { max_output_bytes: MAX_OUTPUT_BYTES },
    });
    // A call that uses the secret makes the executor learn its value, as it would in a run.
    const learned = await harness.call("shell", { command: "true {{secret:k}}" });
    expect(learned.ok).toBe(true);
  });
  afterEach(() => harness.dispose());

  it("search_files masks the part of the secret its line cut keeps", async () => {
    // Cuts after 4, 18 and all but one character of the secret.
    for (const kept of [4, 18, SECRET.length - 1]) {
      const before = `marker ${"p".repeat(SHOWN_LINE_CHARACTERS - "marker ".length - kept)}`;
      writeFileSync(path.join(harness.workdir, "conf.txt"), `${before}${SECRET} and more\n`);
      const result = await harness.call("search_files", { pattern: "marker" });
      expect(result.ok).toBe(true);
      expect(result.output).toBe(`conf.txt:1: ${before}[secret:k…]…`);
      expectNoSecretPrefix(result.output);
    }
  });

  it("search_files still shows a cut line whose end is no secret", async () => {
    const line = `marker ${"p".repeat(400)}`;
    writeFileSync(path.join(harness.workdir, "plain.txt"), `${line}\n`);
    const result = await harness.call("search_files", { pattern: "marker" });
    expect(result.output).toBe(`plain.txt:1: ${line.slice(0, SHOWN_LINE_CHARACTERS)}…`);
  });

  /** How many characters of one long line read_file shows, found as a user would: by reading one. */
  async function shownOfLongLine(): Promise<number> {
    writeFileSync(path.join(harness.workdir, "long.txt"), `${"z".repeat(MAX_OUTPUT_BYTES * 2)}\n`);
    const result = await harness.call("read_file", { path: "long.txt" });
    const shown = /^z+/.exec(result.output)?.[0].length ?? 0;
    expect(shown).toBeGreaterThan(MAX_OUTPUT_BYTES / 2);
    return shown;
  }

  it("read_file masks the part of the secret its budget cut keeps, and keeps its note", async () => {
    const shown = await shownOfLongLine();
    for (const kept of [4, 20, SECRET.length - 1]) {
      const before = "q".repeat(shown - kept);
      writeFileSync(path.join(harness.workdir, "big.txt"), `${before}${SECRET}\nnext line\n`);
      const result = await harness.call("read_file", { path: "big.txt" });
      expect(result.ok).toBe(true);
      expect(result.output).toBe(
        `${before}[secret:k…]\n[showing lines 1-1; the file continues: call read_file with offset=2]`,
      );
      expectNoSecretPrefix(result.output);
    }
  });

  it("read_file masks a secret cut on a line after others filled part of the budget", async () => {
    const shown = await shownOfLongLine();
    const first = "first line";
    const before = "r".repeat(shown - first.length - 1 - 10);
    writeFileSync(path.join(harness.workdir, "two.txt"), `${first}\n${before}${SECRET}\n`);
    const result = await harness.call("read_file", { path: "two.txt" });
    expect(result.output).toBe(`${first}\n${before}[secret:k…]\n[showing lines 1-2; a long line was cut]`);
    expectNoSecretPrefix(result.output);
  });
});
