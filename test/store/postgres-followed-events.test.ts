import type pg from "pg";
import { beforeAll, describe, expect, it } from "vitest";
import type { PendingApproval } from "../../src/approvals/approval-broker.js";
import type { AgentEvent } from "../../src/events/agent-event.js";
import type { RunRecord } from "../../src/run-vocabulary/run-record.js";
import { agentEvents, getRun, listRuns, startRun, waitForRunEnd } from "../daemon/api-shapes.js";
import type { DaemonProcess } from "../support/daemon-process.js";
import {
  eventsReadBy as eventsRead,
  type PostgresCluster,
  startPostgresCluster,
} from "../support/postgres-cluster.js";
import { postgresMissingReason } from "../support/postgres-server.js";
import { textReply, toolCallReply } from "../support/scripted-llm-server.js";
import { useTestKit } from "../support/test-kit.js";
import { waitFor } from "../support/wait-for.js";

const missing = postgresMissingReason();
/** Tool calls of each run of `busy`: two events each (action, observation), besides the rest. */
const CALLS_PER_RUN = 6;
const RUNS = 6;
/** Small rings: a follower arriving late reads part from the ring's restart, part from history. */
const BUFFER_SIZE = 16;

/** Reads the SSE stream of `agent` resumed after `lastEventId` until event `last`. */
async function streamed(
  node: DaemonProcess,
  agent: string,
  lastEventId: number,
  last: number,
): Promise<AgentEvent[]> {
  const response = await fetch(`${node.url}/agents/${agent}/events/stream`, {
    headers: { ...node.headers(), "last-event-id": String(lastEventId) },
    signal: AbortSignal.timeout(60_000),
  });
  expect(response.status).toBe(200);
  const reader = (response.body as ReadableStream<Uint8Array>)
    .pipeThrough(new TextDecoderStream())
    .getReader();
  const events: AgentEvent[] = [];
  let buffer = "";
  while (events.at(-1)?.id !== last) {
    const chunk = await reader.read();
    if (chunk.done) break;
    buffer += chunk.value;
    let end: number;
    while ((end = buffer.indexOf("\n\n")) >= 0) {
      const block = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      const data = block.split("\n").find((line) => line.startsWith("data: "));
      if (data !== undefined) events.push(JSON.parse(data.slice(6)) as AgentEvent);
    }
  }
  await reader.cancel();
  return events;
}

/**
 * A node reads in full only the agents it runs or a client of it follows: `busy` runs only on
 * node A (node B's copy is `enabled: false`, so B never claims its runs — a node claims only
 * agents it can run); B reads only its notable events until a client of B follows it, and then
 * serves every event of it, the same as A. B's `after` trigger, and B's view of the approvals,
 * work from the notable events alone.
 */
describe.skipIf(missing !== undefined)("which events a node reads", { timeout: 180_000 }, () => {
  const kit = useTestKit("file");
  let cluster: PostgresCluster;
  let nodeA: DaemonProcess;
  let nodeB: DaemonProcess;
  let database: pg.Pool;

  beforeAll(async () => {
    cluster = await startPostgresCluster(kit, {
      nodes: 2,
      reply: (request) => {
        const messages = request.body?.messages ?? [];
        const text = JSON.stringify(messages);
        const results = messages.filter((message) => message.role === "tool").length;
        if (text.includes("ask first") && results === 0)
          return toolCallReply({ name: "shell", arguments: { command: "echo approved-through-b" } });
        if (text.includes("list often") && results < CALLS_PER_RUN)
          // Each call another spelling of the same folder: the same call repeated would end the run.
          return toolCallReply({ name: "list_dir", arguments: { path: `.${"/.".repeat(results)}` } });
        if (text.includes("follow up")) return textReply("followed");
        return textReply("busy result");
      },
      config: () => ({ events: { buffer_size: BUFFER_SIZE }, concurrency: 4 }),
      agents: (project, index) => {
        project.writeAgent("busy", {
          // Node B knows the agent (it serves its events and approvals) but never runs it.
          enabled: index === 0,
          tools: ["list_dir", "shell"],
          permissions: { allow: ["list_dir"], ask: ["shell"] },
        });
        // Node B's own agent, started by busy's runs ending on node A.
        if (index === 1)
          project.writeAgent("follower", {
            triggers: [{ after: { agent: "busy" }, task: "follow up {{upstream.id}}: {{upstream.result}}" }],
          });
      },
    });
    [nodeA, nodeB] = cluster.nodes as [DaemonProcess, DaemonProcess];
    database = cluster.database;
  }, 120_000);

  async function written(agent: string): Promise<number> {
    const result = await database.query<{ last_id: string }>(
      "SELECT last_id FROM agentd_event_counters WHERE agent = $1",
      [agent],
    );
    return Number(result.rows[0]?.last_id ?? 0);
  }

  let busyRuns: RunRecord[] = [];

  it("has a node that does not run an agent read only its notable events", async () => {
    const ids: string[] = [];
    for (let index = 0; index < RUNS; index++) ids.push(await startRun(nodeA, "busy", `list often ${index}`));
    busyRuns = await Promise.all(ids.map((id) => waitForRunEnd(nodeA, id, 120_000)));
    for (const record of busyRuns) {
      expect(record.status).toBe("completed");
      expect(record.node).toBe(cluster.ids[0]);
    }
    const total = await written("busy");
    expect(total).toBeGreaterThanOrEqual(RUNS * CALLS_PER_RUN * 2);
    // Node B has seen each run end (its run list) — so its feed is past them all.
    await waitFor(async () => {
      const records = await Promise.all(ids.map((id) => getRun(nodeB, id)));
      return records.every((record) => record.status === "completed");
    }, "node B to list every run ended");
    // Its after trigger fired for each (below) once it read the ending status: wait for those.
    await waitFor(async () => (await listRuns(nodeB, "?agent=follower")).length >= RUNS, "the followers");
    const readByB = await eventsRead(nodeB, "busy");
    // The notable events only: each run's ending status (a run of busy asks for nothing here).
    expect(readByB).toBe(RUNS);
    expect(readByB).toBeLessThan(total / 10);
  });

  it("fires an after trigger on node B for a run that ended on node A, with its result", async () => {
    const followers = await waitFor(async () => {
      const found = await listRuns(nodeB, "?agent=follower");
      return found.every((run) => run.ended_at !== undefined) ? found : undefined;
    }, "the followers to end");
    for (const record of busyRuns) {
      const follower = followers.find((run) => run.trigger?.kind === "after" && run.trigger.id === record.id);
      expect(follower?.task).toBe(`follow up ${record.id}: busy result`);
      expect(follower?.node).toBe(cluster.ids[1]);
    }
  });

  it("lists node A's pending approval on node B and takes B's answer", async () => {
    const before = await eventsRead(nodeB, "busy");
    const run = await startRun(nodeA, "busy", "ask first");
    const approval = await waitFor(async () => {
      const reply = await nodeB.request("GET", "/approvals");
      return (reply.body as { approvals: PendingApproval[] }).approvals.find(
        (pending) => pending.run === run,
      );
    }, "the approval on node B");
    expect(approval.tool).toBe("shell");
    const reply = await nodeB.request("POST", `/approvals/${approval.id}`, { decision: "approve" });
    expect(reply.status).toBe(200);
    const ended = await waitForRunEnd(nodeA, run, 60_000);
    expect(ended.status).toBe("completed");
    busyRuns.push(ended);
    await waitFor(async () => (await getRun(nodeB, run)).status === "completed", "node B to list it ended");
    await waitFor(
      async () => (await listRuns(nodeB, "?agent=follower")).length >= busyRuns.length,
      "its follower",
    );
    // Still only the notable ones (the approval asked and decided, the ending status): answering
    // it on B wrote its audit entry there, which does not make B follow the agent.
    expect((await eventsRead(nodeB, "busy")) - before).toBeLessThanOrEqual(3);
  });

  it("serves every event of the agent on node B once a client follows it there, as node A does", async () => {
    const total = await written("busy");
    // A stream resumed with Last-Event-ID on B, from older than its ring holds: every event, in
    // order, the same as A's.
    const resumedAfter = Math.floor(total / 3);
    const fromA = await streamed(nodeA, "busy", resumedAfter, total);
    expect(fromA.map((event) => event.id)).toEqual(
      Array.from({ length: total - resumedAfter }, (_, index) => resumedAfter + 1 + index),
    );
    expect(await streamed(nodeB, "busy", resumedAfter, total)).toEqual(fromA);
    // A poll from after=0 on B: the same page as on A (its ring, and what it missed before it).
    const page = async (node: DaemonProcess) =>
      (await node.request("GET", "/agents/busy/events?after=0&limit=1000")).body;
    const pageOfA = (await page(nodeA)) as { events: AgentEvent[]; missed: number };
    expect(pageOfA.events.at(-1)?.id).toBe(total);
    expect(pageOfA.missed + pageOfA.events.length).toBe(total);
    expect(await page(nodeB)).toEqual(pageOfA);

    // Followed now: a long poll on B wakes for the next run on A, and B reads all its events.
    const readBefore = await eventsRead(nodeB, "busy");
    const poll = nodeB.request("GET", `/agents/busy/events?after=${total}&wait=30`);
    const run = await startRun(nodeA, "busy", "list often once more");
    const woken = (await poll).body as { events: AgentEvent[] };
    expect(woken.events[0]?.id).toBe(total + 1);
    await waitForRunEnd(nodeA, run, 60_000);
    // Served ended on A: its events up to its ending status are served there already.
    const newOnA = await agentEvents(nodeA, "busy", total);
    expect(newOnA.at(-1)).toMatchObject({ type: "status", run, data: { status: "completed" } });
    const after = newOnA.at(-1)?.id ?? 0;
    // B serves the same once its feed has read them.
    const newOnB = await waitFor(async () => {
      const events = await agentEvents(nodeB, "busy", total);
      return events.at(-1)?.id === after ? events : undefined;
    }, "node B to serve the new run's events to its end");
    expect(newOnB).toEqual(newOnA);
    expect((await eventsRead(nodeB, "busy")) - readBefore).toBeGreaterThanOrEqual(after - total);
  });
});
