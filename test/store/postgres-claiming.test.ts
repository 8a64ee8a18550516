import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { RunRecord } from "../../src/runs/run-record.js";
import { getRun, startRun } from "../daemon/api-shapes.js";
import { createWorkspace, waitFor } from "../daemon/daemon-workspace.js";
import { type DaemonProcess, startDaemonProcess } from "../support/daemon-process.js";
import { type PostgresServer, postgresMissingReason, startPostgres } from "../support/postgres-server.js";
import { type ScriptedLlmServer, startScriptedLlmServer, textReply } from "../support/scripted-llm-server.js";

const missing = postgresMissingReason();

/** Waits until every run is finished; returns their records. */
function finished(reader: DaemonProcess, ids: string[]): Promise<RunRecord[]> {
  return waitFor(
    async () => {
      const records = await Promise.all(ids.map((id) => getRun(reader, id)));
      return records.every((record) => ["completed", "failed", "stopped"].includes(record.status))
        ? records
        : undefined;
    },
    `${ids.length} runs to finish`,
    120_000,
  );
}

async function nodeId(daemon: DaemonProcess): Promise<string> {
  return ((await daemon.request("GET", "/health")).body as { node: string }).node;
}

/** Runs posted to any node wait in PostgreSQL until a node with a free slot claims them. */
describe.skipIf(missing !== undefined)("runs claimed across the cluster", { timeout: 240_000 }, () => {
  let postgres: PostgresServer;
  let llm: ScriptedLlmServer;
  const nodes: DaemonProcess[] = [];
  const ids: string[] = [];

  beforeAll(async () => {
    postgres = await startPostgres();
    llm = await startScriptedLlmServer();
    llm.setDefaultReply((request) => {
      const messages = JSON.stringify(request.body?.messages ?? []);
      if (messages.includes("hang forever")) return { type: "hang" };
      if (messages.includes("take a while")) return textReply("done", { delayBeforeFirstChunkMs: 150 });
      return textReply("done");
    });
    for (let index = 0; index < 3; index++) {
      const workspace = createWorkspace(llm.url, {
        store: { backend: "postgres", url: postgres.url },
        // The first node has one slot; the others have room.
        concurrency: index === 0 ? 1 : 4,
      });
      // Only the first node has this agent: its runs can only run there.
      if (index === 0) workspace.writeAgent("only-first", {});
      workspace.writeAgent("worker", { limits: { max_concurrent_runs: 50 } });
      workspace.writeAgent("single", { limits: { max_concurrent_runs: 1 } });
      nodes.push(await startDaemonProcess({ configFile: workspace.configFile }));
      ids.push(await nodeId(nodes[index] as DaemonProcess));
    }
  }, 180_000);

  afterAll(async () => {
    for (const node of nodes) await node.kill();
    await llm?.close();
    await postgres?.stop();
  });

  it("runs posted to a node with no free slot are executed by the other nodes", async () => {
    const [first, second, third] = nodes as [DaemonProcess, DaemonProcess, DaemonProcess];
    const busy = await startRun(first, "only-first", "hang forever");
    const running = await waitFor(async () => {
      const record = await getRun(second, busy);
      return record.status === "running" ? record : undefined;
    }, "the first node's slot to be taken");
    expect(running.node).toBe(ids[0]);
    const posted: string[] = [];
    for (let index = 0; index < 8; index++) posted.push(await startRun(first, "worker", `job ${index}`));
    const records = await finished(third, posted);
    for (const record of records) {
      expect(record.status).toBe("completed");
      expect([ids[1], ids[2]]).toContain(record.node);
    }
    // Stopped from another node: the stop reaches the node running it.
    await second.request("POST", `/runs/${busy}/stop`);
    const stopped = await finished(third, [busy]);
    expect(stopped[0]).toMatchObject({ status: "stopped", reason: "user_stop" });
  });

  it("keeps an agent's max_concurrent_runs across the cluster, not per node", async () => {
    const posted: string[] = [];
    for (let index = 0; index < 9; index++) {
      posted.push(await startRun(nodes[index % 3] as DaemonProcess, "single", `take a while ${index}`));
    }
    const records = await finished(nodes[0] as DaemonProcess, posted);
    expect(records.every((record) => record.status === "completed")).toBe(true);
    const spans = records
      .map((record) => ({
        start: Date.parse(record.started_at ?? ""),
        end: Date.parse(record.ended_at ?? ""),
      }))
      .sort((left, right) => left.start - right.start);
    for (let index = 1; index < spans.length; index++) {
      expect(spans[index]?.start).toBeGreaterThanOrEqual(spans[index - 1]?.end ?? Number.POSITIVE_INFINITY);
    }
  });

  it("stops a run still in the cluster's queue from any node: it never starts", async () => {
    const [first, second, third] = nodes as [DaemonProcess, DaemonProcess, DaemonProcess];
    const holding = await startRun(first, "single", "hang forever");
    await waitFor(
      async () => ((await getRun(third, holding)).status === "running" ? true : undefined),
      "the agent's one slot to be taken",
    );
    const waiting = await startRun(second, "single", "never runs");
    // Another node lists it a moment later (the change feed).
    await waitFor(
      async () => ((await getRun(third, waiting)).status === "queued" ? true : undefined),
      "the queued run on another node",
    );
    await third.request("POST", `/runs/${waiting}/stop`);
    const [stopped] = await finished(first, [waiting]);
    expect(stopped).toMatchObject({ status: "stopped", reason: "user_stop" });
    expect(stopped?.started_at).toBeUndefined();
    await second.request("POST", `/runs/${holding}/stop`);
    await finished(first, [holding]);
  });
});
