import { describe, expect, it } from "vitest";
import {
  MAX_CLI_LINE_CHARACTERS,
  MAX_CLI_TEXT_CHARACTERS,
} from "../../../src/workers/cli/cli-output-limits.js";
import { cliHarness } from "./cli-test-kit.js";

/** A little over each cap: enough to cross it, small enough to stay quick and light. */
const TEXT_BYTES = MAX_CLI_TEXT_CHARACTERS * 3;
const LINE_BYTES = MAX_CLI_LINE_CHARACTERS + 2 * 1024 * 1024;

function printingTool(script: string, output: "text" | "claude") {
  return { flood: { command: "/bin/sh", args: ["-c", script, "{task}"], output } };
}

describe("a CLI that prints far more than anyone reads", () => {
  it("keeps the first MiB of plain text as the answer, with a note saying how much was cut", async () => {
    const harness = cliHarness({ cliTools: printingTool(`yes | head -c ${TEXT_BYTES}`, "text") });
    const outcome = await harness.run({ tool: "flood", fallback: "none" });

    expect(outcome.status).toBe("completed");
    const result = outcome.result ?? "";
    expect(result.length).toBeLessThan(MAX_CLI_TEXT_CHARACTERS + 300);
    expect(result.startsWith("y\ny\ny\n")).toBe(true);
    expect(result).toMatch(
      /\[agentd cut 2,097,152 more characters here: a CLI.s answer is kept up to 1,048,576 characters \(docs\/cli-workers\.md\)\]$/,
    );
    const thoughts = harness.eventsOf("thought");
    expect(thoughts.every((event) => event.data.text.length < MAX_CLI_TEXT_CHARACTERS + 300)).toBe(true);
  });

  it("cuts one enormous line of plain text where the line limit ends, and says so", async () => {
    const harness = cliHarness({
      cliTools: printingTool(`head -c ${LINE_BYTES} /dev/zero | tr '\\0' a`, "text"),
    });
    const outcome = await harness.run({ tool: "flood", fallback: "none" });

    expect(outcome.status).toBe("completed");
    expect(outcome.result?.length).toBeLessThan(MAX_CLI_TEXT_CHARACTERS + 300);
    expect(outcome.result).toMatch(/^a{1000}/);
    expect(outcome.result).toMatch(
      /more characters here: a CLI's (text|answer) is kept up to 1,048,576 characters/,
    );
  });

  it("reports a JSON stream line past the limit as ignored, naming the limit, and still reads the lines after it", async () => {
    const result = JSON.stringify({
      type: "result",
      subtype: "success",
      is_error: false,
      result: "after the flood",
      session_id: "s",
    });
    const harness = cliHarness({
      cliTools: printingTool(
        `head -c ${LINE_BYTES} /dev/zero | tr '\\0' a; echo; echo '${result}'`,
        "claude",
      ),
    });
    const outcome = await harness.run({ tool: "flood", fallback: "none" });

    expect(outcome).toMatchObject({ status: "completed", result: "after the flood" });
    const warnings = harness.eventsOf("warning").map((event) => event.data.message);
    expect(warnings).toContainEqual(
      expect.stringMatching(
        /ignored a line of CLI output \(longer than 4,194,304 characters: 2,097,152 more were dropped\)/,
      ),
    );
  });
});
