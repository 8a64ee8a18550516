import { describe, expect, it } from "vitest";
import { SecretRedactor } from "../../src/secrets/secret-redactor.js";

const SECRET = "hunter2-long-secret-9f1c";
/** The secret's bytes in hex, spaced as `xxd` or a debugger prints them. */
const SPACED_HEX = [...Buffer.from(SECRET)].map((byte) => byte.toString(16).padStart(2, "0")).join(" ");
/** Megabytes of hex digits in one run: a hex dump, a blob an MCP server answered with. */
const HEX_RUN = "b".repeat(12 * 1024 * 1024);

function redactor(): SecretRedactor {
  const made = new SecretRedactor();
  made.add("api_key", SECRET);
  return made;
}

describe("masking texts of many megabytes", () => {
  it("masks a 12 MB run of hex digits without overflowing the regex engine's stack", () => {
    const text = `${HEX_RUN} then ${SECRET}`;
    const masked = redactor().redact(text);
    expect(masked.endsWith(" then [secret:api_key]")).toBe(true);
    expect(masked.length).toBe(HEX_RUN.length + " then [secret:api_key]".length);
  });

  it("finds an encoded secret wherever it lies in a long text, across the windows it is searched in", () => {
    const filler = "lorem ipsum ".repeat(90_000);
    // Spaced hex at the start, at the seam of the first two windows (1 MiB), and at the end.
    const text = `${SPACED_HEX}\n${filler.slice(0, 1_048_576 - 40 - SPACED_HEX.length)}\n${SPACED_HEX}\n${filler}\n${SPACED_HEX}`;
    const masked = redactor().redact(text);
    expect(masked).not.toContain(SPACED_HEX);
    expect(masked.match(/\[secret:api_key\]/g)).toHaveLength(3);
  });
});
