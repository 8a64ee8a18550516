import { describe, expect, it } from "vitest";
import type { AgentEvent } from "../../../src/dashboard/web/api-types.js";
import { Timeline } from "../../../src/dashboard/web/timeline.js";

let nextId = 0;
function event(type: string, data: Record<string, unknown>, run = "r_1"): AgentEvent {
  nextId += 1;
  return { id: nextId, agent: "writer", run, type, time: "2026-01-01T00:00:00.000Z", data };
}

describe("a run's timeline", () => {
  it("puts each observation and approval on the row of its tool call", () => {
    const timeline = new Timeline("r_1");
    const thought = event("thought", { text: "I will write" });
    const action = event("action", { call_id: "c1", tool: "write_file", arguments: { path: "a" } });
    const requested = event("approval", { id: "a_1", state: "requested", tool: "write_file" });
    const approved = event("approval", { id: "a_1", state: "approved", tool: "write_file", by: "api" });
    const observation = event("observation", { call_id: "c1", tool: "write_file", ok: true, output: "done" });
    timeline.add([thought, action, requested, approved, observation]);
    expect(timeline.rows.map((row) => row.kind)).toEqual(["event", "call"]);
    expect(timeline.rows[1]).toMatchObject({
      action,
      observation,
      approval: { requested, answer: approved },
    });
  });

  it("drops an event it already has (a replay after a reconnect) and events of other runs", () => {
    const timeline = new Timeline("r_1");
    const first = event("status", { status: "running" });
    const other = event("status", { status: "running" }, "r_2");
    const second = event("thought", { text: "hello" });
    expect(timeline.add([first, other])).toBe(true);
    expect(timeline.add([first, second, second])).toBe(true);
    expect(timeline.add([first, second])).toBe(false);
    expect(timeline.rows).toHaveLength(2);
    expect(timeline.lastId).toBe(second.id);
  });

  it("lays the rows out in id order when the live stream brings the newest events before the history", () => {
    const timeline = new Timeline("r_1");
    const queued = event("status", { status: "queued" });
    const action = event("action", { call_id: "c3", tool: "write_file", arguments: { path: "a" } });
    const waiting = event("status", { status: "waiting" });
    const requested = event("approval", { id: "a_3", state: "requested", tool: "write_file" });
    timeline.add([waiting]);
    timeline.add([requested]);
    expect(timeline.add([queued, action, waiting, requested])).toBe(true);
    expect(timeline.rows.map((row) => row.kind)).toEqual(["event", "call", "event"]);
    expect(timeline.rows[0]).toMatchObject({ event: queued });
    expect(timeline.rows[1]).toMatchObject({ action, approval: { requested, answer: undefined } });
    expect(timeline.rows[2]).toMatchObject({ event: waiting });
    expect(timeline.lastId).toBe(requested.id);
  });

  it("keeps an approval whose call it never saw on a row of its own", () => {
    const timeline = new Timeline("r_1");
    const requested = event("approval", { id: "a_2", state: "requested", tool: "shell" });
    const denied = event("approval", { id: "a_2", state: "denied", tool: "shell" });
    timeline.add([requested, denied]);
    expect(timeline.rows).toEqual([
      { kind: "approval", key: `approval-${requested.id}`, requested, answer: denied },
    ]);
  });
});
