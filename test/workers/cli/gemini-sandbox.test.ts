import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import {
  STDERR_EXCERPT_BYTES,
  maskCliOutput,
  stderrExcerpt,
} from "../../../src/workers/cli/stderr-excerpt.js";
import { CliHarness } from "./cli-test-kit.js";

const harnesses: CliHarness[] = [];
const folders: string[] = [];
afterEach(() => {
  for (const harness of harnesses.splice(0)) harness.dispose();
  for (const folder of folders.splice(0)) rmSync(folder, { recursive: true, force: true });
});

function geminiHome(): string {
  // Outside the harness's folder: what the sandbox shows of it is only what agentd binds.
  const folder = mkdtempSync(path.join(tmpdir(), "agentd-gemini-home-"));
  folders.push(folder);
  return folder;
}

describe("Gemini CLI in the default sandbox", () => {
  it("writes in $GEMINI_CLI_HOME/.gemini, created when missing", async () => {
    const home = geminiHome();
    const harness = new CliHarness({
      scenario: "home_write",
      cliTools: { gemini: { env: { GEMINI_CLI_HOME: home } } },
    });
    harnesses.push(harness);
    const outcome = await harness.run({ tool: "gemini", fallback: "none" });
    expect(outcome.error?.message).toBeUndefined();
    expect(outcome.status).toBe("completed");
    expect(readFileSync(path.join(home, ".gemini", "installation_id"), "utf8")).toBe("c1a2b3d4\n");
    expect(existsSync(path.join(home, ".gemini", "tmp"))).toBe(true);
  });

  it("carries the last stderr lines of a crash, bounded and masked", async () => {
    const key = "AIzaSyTestKey0123456789abcdefghijklmnop";
    const harness = new CliHarness({
      scenario: "crash_trace",
      cliTools: { gemini: { env: { GEMINI_API_KEY: key } } },
    });
    harnesses.push(harness);
    const outcome = await harness.run({ tool: "gemini", fallback: "none" });
    const message = outcome.error?.message ?? "";
    expect(message).toMatch(/^gemini exited with code 1: Node\.js v20\.20\.2\nlast lines of stderr:\n/);
    expect(message).toContain("TypeError: Cannot read properties of undefined (reading 'model')");
    expect(message).toContain("at loadConfig (file:///usr/lib/gemini/config.js:12:5)");
    expect(message).not.toContain(key);
    expect(message).not.toContain("ya29.");
    expect(message).toContain("request failed with key *** and Authorization: Bearer ***");
    const excerpt = message.split("last lines of stderr:\n")[1] ?? "";
    expect(excerpt.split("\n")).toHaveLength(20);
    expect(excerpt).not.toContain("debug line 12\n");
    // The error event says the same.
    expect(harness.eventsOf("error")[0]?.data.message).toBe(message);
  });
});

describe("stderrExcerpt and maskCliOutput", () => {
  it("keeps at most 4 KB, cut at a line start", () => {
    const long = Array.from({ length: 15 }, (_, index) => `${index} ${"é".repeat(200)}`).join("\n");
    const excerpt = stderrExcerpt(long);
    expect(Buffer.byteLength(excerpt)).toBeLessThanOrEqual(STDERR_EXCERPT_BYTES + 4);
    expect(excerpt.startsWith("…\n")).toBe(true);
    expect(excerpt.split("\n")[1]).toMatch(/^\d+ é/);
    expect(excerpt).not.toContain("\uFFFD");
  });

  it("never quotes a last line the 4 KB cut falls inside (it could begin inside a secret)", () => {
    const secret = "sk-live-7f3a9c1e5b2d8f4a6c0e9b7d";
    // The last 4 KB begin 12 characters before the secret's end.
    const excerpt = stderrExcerpt(`first line\n${secret}${"y".repeat(STDERR_EXCERPT_BYTES - 12)}`);
    expect(excerpt).not.toContain(secret.slice(-8));
    expect(excerpt).toContain("not quoted");
  });

  it("masks the child's secret variables, vault values, key shapes and named values", () => {
    const text = [
      "OPENAI key sk-proj-abcdefghijklmnopqrstuvwx used",
      "token=abcd1234efgh and password: hunter22",
      'header {"api_key": "k-9f8e7d6c5b"}',
      "github ghp_0123456789abcdefghijABCDEFGHIJ",
      "value own-secret-value-42 in the vault",
      "the configured MY_SERVICE_TOKEN is s3cr3t-v4lue",
      "plain line with model gemini-2.5-pro stays",
    ].join("\n");
    const masked = maskCliOutput(text, { MY_SERVICE_TOKEN: "s3cr3t-v4lue", PATH: "/usr/bin" }, (part) =>
      part.replaceAll("own-secret-value-42", "[secret]"),
    );
    expect(masked).toBe(
      [
        "OPENAI key *** used",
        "token=*** and password: ***",
        'header {"api_key": "***"}',
        "github ***",
        "value [secret] in the vault",
        "the configured MY_SERVICE_TOKEN is ***",
        "plain line with model gemini-2.5-pro stays",
      ].join("\n"),
    );
  });
});
