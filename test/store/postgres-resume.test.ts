import { mkdirSync } from "node:fs";
import path from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import type { RunRecord } from "../../src/run-vocabulary/run-record.js";
import { getRun, runEvents, startRun } from "../daemon/api-shapes.js";
import type { DaemonProcess } from "../support/daemon-process.js";
import { type PostgresCluster, startPostgresCluster } from "../support/postgres-cluster.js";
import { postgresMissingReason } from "../support/postgres-server.js";
import { type RecordedRequest, textReply, toolCallReply } from "../support/scripted-llm-server.js";
import { useTestKit } from "../support/test-kit.js";
import { waitFor } from "../support/wait-for.js";

const missing = postgresMissingReason();

/** Tasks naming this word hang at round 3 until `released` holds it; earlier rounds write a file. */
const released = new Set<string>();

function roundOf(request: RecordedRequest): number {
  return (request.body?.messages ?? []).filter((message) => message.role === "assistant").length + 1;
}

function taskOf(request: RecordedRequest): string {
  return String(request.body?.messages.find((message) => message.role === "user")?.content ?? "");
}

/** The node running a run (its record's `node`), once it runs. */
async function running(cluster: PostgresCluster, run: string): Promise<DaemonProcess> {
  const record = await waitFor(async () => {
    const found = await getRun(cluster.nodes[0] as DaemonProcess, run);
    return found.status === "running" ? found : undefined;
  }, `run ${run} to run`);
  return cluster.nodeWithId(record.node);
}

async function ended(reader: DaemonProcess, run: string, status = "completed"): Promise<RunRecord> {
  return waitFor(
    async () => {
      const record = await getRun(reader, run);
      return record.status === status ? record : undefined;
    },
    `run ${run} to be ${status}`,
    60_000,
  );
}

/** Its worker's two tool results are in: round 3 is waiting for the model. */
async function twoRoundsDone(reader: DaemonProcess, run: string): Promise<void> {
  await waitFor(async () => {
    const events = await runEvents(reader, run);
    return events.filter((event) => event.type === "observation").length >= 2 ? true : undefined;
  }, `run ${run} to finish two rounds`);
}

/** SIGTERM to a node (its runs stop with daemon_shutdown after the grace), then starts it again. */
async function stopAndStartAgain(cluster: PostgresCluster, node: DaemonProcess): Promise<DaemonProcess> {
  const index = cluster.nodes.indexOf(node);
  node.signal("SIGTERM");
  await node.exited;
  return cluster.restart(index);
}

/** Runs cut off by a node's shutdown continue from their checkpoint in the cluster. */
describe.skipIf(missing !== undefined)("resuming runs on PostgreSQL", { timeout: 240_000 }, () => {
  const kit = useTestKit("file");
  let cluster: PostgresCluster;

  beforeAll(async () => {
    cluster = await startPostgresCluster(kit, {
      reply: (request) => {
        const task = taskOf(request);
        if (task.includes("hang forever")) return { type: "hang" };
        const round = roundOf(request);
        if (round <= 2 && task.includes("two rounds"))
          return toolCallReply({
            name: "write_file",
            arguments: { path: `round-${round}.txt`, content: `round ${round}` },
          });
        if (![...released].some((word) => task.includes(word))) return { type: "hang" };
        const toolResults = (request.body?.messages ?? []).filter((message) => message.role === "tool");
        return textReply(`finished after ${toolResults.length} tool results`);
      },
      nodes: 2,
      config: () => ({ shutdown: { grace: "1s" } }),
      agents: (project) => {
        mkdirSync(path.join(project.root, "work"));
        const writer = { workdir: "work", tools: ["write_file"], permissions: { allow: ["write_file"] } };
        project.writeAgent("steady", { ...writer, resume: true });
        project.writeAgent("single", { ...writer, limits: { max_concurrent_runs: 1 } });
      },
    });
  }, 180_000);

  it("resumes from its checkpoint a run stopped by its node's shutdown once that node starts again", async () => {
    const run = await startRun(cluster.nodes[0] as DaemonProcess, "steady", "steady: two rounds");
    const node = await running(cluster, run);
    await twoRoundsDone(node, run);
    const other = cluster.nodes.find((daemon) => daemon !== node) as DaemonProcess;
    node.signal("SIGTERM");
    await node.exited;
    // Only a start, a POST resume or a lease takeover resumes it: the node left the cluster cleanly.
    expect(await ended(other, run, "stopped")).toMatchObject({ reason: "daemon_shutdown" });
    released.add("steady");
    const before = cluster.llm.chatRequests.length;
    await cluster.restart(cluster.nodes.indexOf(node));
    expect(await ended(other, run)).toMatchObject({ result: "finished after 2 tool results" });
    // The model saw rounds 1 and 2 again, from the checkpoint, and no third write_file happened.
    const resumedRequest = cluster.llm.chatRequests
      .slice(before)
      .find((request) => taskOf(request).includes("steady"));
    const roles = (resumedRequest?.body?.messages ?? []).map((message) => message.role);
    expect(roles).toEqual(["system", "user", "assistant", "tool", "assistant", "tool"]);
    const events = await runEvents(other, run);
    expect(events.filter((event) => event.type === "action")).toHaveLength(2);
    const resumed = events.find(
      (event) => event.type === "status" && event.data.resumed_from_round !== undefined,
    );
    expect(resumed?.data).toMatchObject({ status: "queued", resumed_from_round: 2 });
  });

  it("resumes on POST from any node, once, within the agent's max_concurrent_runs across the cluster", async () => {
    const run = await startRun(cluster.nodes[1] as DaemonProcess, "single", "single: two rounds");
    const node = await running(cluster, run);
    await twoRoundsDone(node, run);
    const restarted = await stopAndStartAgain(cluster, node);
    // Without `resume: true` the start leaves it stopped.
    expect(await getRun(restarted, run)).toMatchObject({ status: "stopped", reason: "daemon_shutdown" });

    // The agent's one slot in the cluster is taken by a run on either node.
    const holder = await startRun(restarted, "single", "hang forever");
    await running(cluster, holder);
    const other = cluster.nodes.find((daemon) => daemon !== restarted) as DaemonProcess;
    const reply = await other.request("POST", `/runs/${run}/resume`);
    expect(reply.status).toBe(200);
    expect(reply.body).toMatchObject({ status: "queued" });
    const again = await restarted.request("POST", `/runs/${run}/resume`);
    expect(again.status).toBe(409);
    for (const daemon of cluster.nodes)
      await waitFor(
        async () => ((await getRun(daemon, run)).status === "queued" ? true : undefined),
        "the resumed run queued on every node",
      );
    released.add("single");
    await other.request("POST", `/runs/${holder}/stop`);
    const held = await ended(other, holder, "stopped");
    const finished = await ended(other, run);
    expect(finished.result).toBe("finished after 2 tool results");
    // It waited for the agent's one slot, wherever it was taken.
    expect(Date.parse(finished.started_at ?? "")).toBeGreaterThanOrEqual(Date.parse(held.ended_at ?? ""));
  });
});
