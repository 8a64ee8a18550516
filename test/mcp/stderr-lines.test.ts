import { PassThrough } from "node:stream";
import { describe, expect, it } from "vitest";
import { createLogger } from "../../src/logging/logger.js";
import { LOGGED_LINE_CHARACTERS, StderrLines } from "../../src/mcp/stderr-lines.js";
import { SecretRedactor } from "../../src/secrets/secret-redactor.js";

const SECRET = "sk-live-7f3a9c1e5b2d8f4a6c0e9b7d";

/** StderrLines wired as mcp-transport wires it, into a real logger masking with the vault's redactor. */
function debugLog() {
  const redactor = new SecretRedactor();
  redactor.add("api_key", SECRET);
  const destination = new PassThrough();
  let written = "";
  destination.on("data", (chunk: Buffer) => (written += chunk.toString("utf8")));
  const logger = createLogger({
    level: "debug",
    pretty: false,
    redact: (text) => redactor.redact(text),
    destination,
  });
  const lines = new StderrLines(
    (line) => logger.debug({ server: "fixture", stderr: line }, "MCP server stderr"),
    (characters) =>
      logger.debug(
        { server: "fixture", stderr_line_characters: characters },
        "MCP server stderr line too long to log",
      ),
  );
  return { lines, written: () => written };
}

describe("an MCP server's stderr in the debug log", () => {
  it("masks a vault value the server wrote in two pieces, and logs whole lines only", () => {
    const { lines, written } = debugLog();
    lines.write(`starting\nusing key ${SECRET.slice(0, 14)}`);
    lines.write(`${SECRET.slice(14)} for the API\r\nready`);
    lines.end();
    const entries = written()
      .trim()
      .split("\n")
      .map((line) => JSON.parse(line) as { stderr: string });
    expect(entries.map((entry) => entry.stderr)).toEqual([
      "starting",
      "using key [secret:api_key] for the API",
      "ready",
    ]);
    expect(written()).not.toContain(SECRET.slice(0, 14));
    expect(written()).not.toContain(SECRET.slice(14));
  });

  it("logs a line longer than the limit as its length, never a cut of it", () => {
    const { lines, written } = debugLog();
    const filler = "x".repeat(LOGGED_LINE_CHARACTERS - 10);
    lines.write(filler);
    lines.write(`${SECRET}tail\nnext`);
    lines.end();
    expect(written()).toContain(`"stderr_line_characters":${filler.length + SECRET.length + 4}`);
    expect(written()).toContain('"stderr":"next"');
    expect(written()).not.toContain(SECRET.slice(0, 10));
    expect(written()).not.toContain("xxxx");
  });
});
