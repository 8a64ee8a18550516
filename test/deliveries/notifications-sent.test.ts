import { describe, expect, it } from "vitest";
import type { AgentEvent } from "../../src/events/agent-event.js";
import { notificationsSentBefore, type TreeHistory } from "../../src/deliveries/notifications-sent.js";
import type { RunRecord } from "../../src/run-vocabulary/run-record.js";

let nextId = 0;
const at = (milliseconds: number) => new Date(milliseconds).toISOString();

function action(run: string, callId: string, time: number, tool = "notify"): AgentEvent {
  return {
    id: ++nextId,
    agent: "monitor",
    run,
    type: "action",
    time: at(time),
    data: { call_id: callId, tool, arguments: { message: "m" } },
  };
}

function observation(run: string, callId: string, time: number, ok: boolean): AgentEvent {
  return {
    id: ++nextId,
    agent: "monitor",
    run,
    type: "observation",
    time: at(time),
    data: { call_id: callId, tool: "notify", ok, output: "", duration_ms: 1 },
  };
}

/** A root run `r_1` and its sub-agent's run `r_2`, with these events in their logs. */
function history(events: Record<string, AgentEvent[]>): TreeHistory {
  const record = (id: string, parent?: string) =>
    ({ id, agent: "monitor", ...(parent ? { parent_run: parent } : {}) }) as RunRecord;
  const records = [record("r_1"), record("r_2", "r_1")];
  return {
    runs: {
      get: (id) => records.find((each) => each.id === id),
      list: async (filter) => records.filter((each) => each.parent_run === filter.parent),
    },
    runEvents: async (run) => events[run] ?? [],
  };
}

describe("the notifications a tree sent before this daemon counted them", () => {
  it("are the calls that ended ok before the read, and those under way when the daemon before stopped", async () => {
    const times = { started: 1_000, now: 2_000 };
    const logs = history({
      r_1: [
        // Before a restart: sent, refused, and one cut off by the kill (it may have sent).
        action("r_1", "a", 100),
        observation("r_1", "a", 110, true),
        action("r_1", "b", 120),
        observation("r_1", "b", 130, false),
        action("r_1", "c", 140),
        action("r_1", "d", 150, "list_dir"),
      ],
      r_2: [
        // On another node, before this one took the run over (after this daemon started).
        action("r_2", "e", 1_500),
        observation("r_2", "e", 1_510, true),
        // This daemon's own call, waiting on the read: counted in memory, not here.
        action("r_2", "f", 1_900),
        // After the read began.
        action("r_2", "g", 2_100),
        observation("r_2", "g", 2_110, true),
      ],
    });
    expect(await notificationsSentBefore("r_1", times, logs)).toBe(3);
  });
});
