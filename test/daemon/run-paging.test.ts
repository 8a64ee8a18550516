import { describe, expect, it } from "vitest";
import type { AgentEvent } from "../../src/events/agent-event.js";
import { textReply } from "../support/scripted-llm-server.js";
import { useScriptedDaemon } from "../support/scripted-daemon.js";
import { startRun, waitForRunEnd } from "./api-shapes.js";

const scripted = useScriptedDaemon({
  reply: textReply("done"),
  agents: (project) => project.writeAgent("pager", { description: "answers" }),
});

describe("paged lists", () => {
  it("pages GET /runs newest first with limit and before, and a run's log with limit and next", async () => {
    const { daemon } = scripted;
    const started: string[] = [];
    for (const task of ["one", "two", "three"]) {
      const run = await startRun(daemon, "pager", task);
      await waitForRunEnd(daemon, run);
      started.push(run);
    }
    const runsPage = async (query: string) =>
      ((await daemon.request("GET", `/runs?agent=pager&${query}`)).body as { runs: Array<{ id: string }> })
        .runs;
    const first = await runsPage("limit=2");
    expect(first.map((run) => run.id)).toEqual([started[2], started[1]]);
    const second = await runsPage(`limit=2&before=${first.at(-1)?.id ?? ""}`);
    expect(second.map((run) => run.id)).toEqual([started[0]]);
    expect((await daemon.request("GET", "/runs?before=r_missing")).status).toBe(404);
    // 100 unless given, 1,000 at most.
    expect((await daemon.request("GET", "/runs?limit=1000")).status).toBe(200);
    expect((await daemon.request("GET", "/runs?limit=1001")).status).toBe(400);

    const run = started[0] ?? "";
    const whole = (await daemon.request("GET", `/runs/${run}/events?limit=10000`)).body as {
      events: AgentEvent[];
    };
    expect(whole.events.length).toBeGreaterThan(2);
    const paged: AgentEvent[] = [];
    for (let after = 0; ;) {
      const page = (await daemon.request("GET", `/runs/${run}/events?after=${after}&limit=1`)).body as {
        events: AgentEvent[];
        next: number;
      };
      expect(page.events.length).toBeLessThanOrEqual(1);
      if (page.events.length === 0) break;
      paged.push(...page.events);
      after = page.next;
    }
    expect(paged).toEqual(whole.events);
    expect((await daemon.request("GET", `/runs/${run}/events?limit=10001`)).status).toBe(400);
  });
});
