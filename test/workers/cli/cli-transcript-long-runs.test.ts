import { describe, expect, it } from "vitest";
import { EventBus } from "../../../src/events/event-bus.js";
import { CliTranscript } from "../../../src/workers/cli/cli-transcript.js";

const MESSAGES = 100_000;

/** CPU time (user + system) `work` took, in milliseconds: wall time would measure the machine's load. */
function cpuMilliseconds(work: () => void): number {
  const before = process.cpuUsage();
  work();
  const spent = process.cpuUsage(before);
  return (spent.user + spent.system) / 1_000;
}

describe("a CLI run of a hundred thousand messages", () => {
  it("keeps the run's usage as messages stream, each message counted once, without summing them all per line", () => {
    const transcript = new CliTranscript(new EventBus(), "flooder", "r_test");
    const spent = cpuMilliseconds(() => {
      for (let index = 0; index < MESSAGES; index++) {
        transcript.streamedUsage(`msg_${index}`, { prompt_tokens: 2, completion_tokens: 1, total_tokens: 3 });
      }
      // Claude Code repeats a message per content block: the latest usage of that id counts.
      transcript.streamedUsage("msg_0", { prompt_tokens: 5, completion_tokens: 5, total_tokens: 10 });
    });

    expect(transcript.usage).toEqual({
      prompt_tokens: 2 * MESSAGES + 3,
      completion_tokens: MESSAGES + 4,
      total_tokens: 3 * MESSAGES + 7,
    });
    // Summing every message per line took minutes here; a running sum takes milliseconds.
    expect(spent).toBeLessThan(5_000);
  });

  it("finds the call an observation answers among a hundred thousand, and counts the open ones", () => {
    const transcript = new CliTranscript(new EventBus(), "flooder", "r_test");
    const spent = cpuMilliseconds(() => {
      for (let index = 0; index < MESSAGES; index++) transcript.action(`call_${index}`, "Bash", { index });
      for (let index = 0; index < MESSAGES - 1; index++) transcript.observation(`call_${index}`, true, "ok");
    });

    expect(transcript.openCalls).toBe(1);
    expect(transcript.call(`call_${MESSAGES - 1}`)).toMatchObject({
      tool: "Bash",
      arguments: { index: MESSAGES - 1 },
    });
    expect(spent).toBeLessThan(5_000);
  });
});
