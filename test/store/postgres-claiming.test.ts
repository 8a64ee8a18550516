import { beforeAll, describe, expect, it } from "vitest";
import type { PendingApproval } from "../../src/approvals/approval-broker.js";
import type { RunRecord } from "../../src/run-vocabulary/run-record.js";
import { getRun, runEvents, startRun } from "../daemon/api-shapes.js";
import type { DaemonProcess } from "../support/daemon-process.js";
import type pg from "pg";
import { eventsReadBy, startPostgresCluster } from "../support/postgres-cluster.js";
import { postgresMissingReason } from "../support/postgres-server.js";
import { textReply, toolCallReply } from "../support/scripted-llm-server.js";
import { useTestKit } from "../support/test-kit.js";
import { waitFor } from "../support/wait-for.js";

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

/** A free-text answer of 20,000 characters: more than a NOTIFY payload (8,000 bytes) can carry. */
const LONG_ANSWER = Array.from({ length: 2_000 }, (_, index) => `${index}`.padStart(10, "0")).join("\n");

/** Runs posted to any node wait in PostgreSQL until a node with a free slot claims them. */
describe.skipIf(missing !== undefined)("runs claimed across the cluster", { timeout: 240_000 }, () => {
  const kit = useTestKit("file");
  let nodes: DaemonProcess[] = [];
  let ids: string[] = [];
  let database: pg.Pool;
  /** When each "take a while" run's model request reached the model server, on its one clock. */
  const slowRequestsArrived: number[] = [];

  beforeAll(async () => {
    const cluster = await startPostgresCluster(kit, {
      reply: (request) => {
        const messages = JSON.stringify(request.body?.messages ?? []);
        if (messages.includes("hang forever")) return { type: "hang" };
        if (messages.includes("take a while")) {
          slowRequestsArrived.push(performance.now());
          return textReply("done", { delayBeforeFirstChunkMs: 150 });
        }
        const asked = request.body?.messages.some((message) => message.role === "tool") ?? false;
        if (messages.includes("ask first") && !asked)
          return toolCallReply({ name: "shell", arguments: { command: "echo approved-on-another-node" } });
        if (messages.includes("free question first") && !asked)
          return toolCallReply({ name: "ask_human", arguments: { question: "Tell me everything." } });
        if (messages.includes("question first") && !asked)
          return toolCallReply({
            name: "ask_human",
            arguments: { question: "Which colour?", choices: ["red", "blue"] },
          });
        return textReply("done");
      },
      nodes: 3,
      // The first node has one slot; the others have room.
      config: (index) => ({ concurrency: index === 0 ? 1 : 4 }),
      agents: (project, index) => {
        // Only the first node has this agent: its runs can only run there.
        if (index === 0) project.writeAgent("only-first", {});
        project.writeAgent("worker", { limits: { max_concurrent_runs: 50 } });
        project.writeAgent("single", { limits: { max_concurrent_runs: 1 } });
        project.writeAgent("asker", { tools: ["shell"], permissions: { ask: ["shell"] } });
        project.writeAgent("questioner", { tools: ["ask_human"], permissions: { allow: ["ask_human"] } });
      },
    });
    ({ nodes, ids, database } = cluster);
  }, 180_000);

  /** Once the run waits for its answer: a node other than the run's, and the question as it lists it. */
  async function questionElsewhere(
    run: string,
  ): Promise<{ elsewhere: DaemonProcess; question: { id: string } }> {
    const waiting = await waitFor(async () => {
      const record = await getRun(nodes[0] as DaemonProcess, run);
      return record.status === "waiting" ? record : undefined;
    }, "the run to wait for its answer");
    const elsewhere = nodes[(ids.indexOf(waiting.node ?? "") + 1) % 3] as DaemonProcess;
    const question = await waitFor(async () => {
      const reply = await elsewhere.request("GET", "/questions");
      return (reply.body as { questions: Array<{ id: string; run: string }> }).questions.find(
        (pending) => pending.run === run,
      );
    }, "the question on another node");
    return { elsewhere, question };
  }

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
    // Posting runs for the cluster does not make the first node follow their agent: of the
    // events of "worker", written by the nodes running them, it reads only the notable ones.
    const counts = await waitFor(async () => {
      const rows = await database.query<{ ended: number; notable: number; total: number }>(
        `SELECT count(*) FILTER (WHERE line::json->>'type' = 'status' AND line::json->'data'->>'status' = 'completed')::int AS ended,
                count(*) FILTER (WHERE notable)::int AS notable, count(*)::int AS total
         FROM agentd_events WHERE agent = 'worker'`,
      );
      const row = rows.rows[0];
      return row?.ended === posted.length ? row : undefined;
    }, "every posted run's ending status to be written");
    expect(counts.notable).toBeLessThan(counts.total);
    await waitFor(
      async () => (await eventsReadBy(first, "worker")) >= counts.notable,
      "the first node to read the runs' notable events",
    );
    expect(await eventsReadBy(first, "worker")).toBe(counts.notable);
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
    // One run of the agent at a time across the three nodes: each run's model request reaches the
    // server after the run before it had its answer, which the server holds back 150 ms. Times on
    // the server's one clock: the runs' own started_at and ended_at come from three nodes' clocks,
    // each set to PostgreSQL's only to within its measure's error, which grows with the load (two
    // nodes' stamps disagreed by 13 ms beside two CPU burners).
    expect(slowRequestsArrived).toHaveLength(9);
    const arrivals = [...slowRequestsArrived].sort((left, right) => left - right);
    for (let index = 1; index < arrivals.length; index++) {
      // 145: a 150 ms timer may fire up to a millisecond early on performance.now()'s finer clock.
      expect((arrivals[index] ?? 0) - (arrivals[index - 1] ?? 0)).toBeGreaterThanOrEqual(145);
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
    // Listed by the database while this node's change feed may not have brought it yet: found all the same.
    const stopReply = await third.request("POST", `/runs/${waiting}/stop`);
    expect(stopReply.status).toBe(200);
    const [stopped] = await finished(first, [waiting]);
    expect(stopped).toMatchObject({ status: "stopped", reason: "user_stop" });
    expect(stopped?.started_at).toBeUndefined();
    await second.request("POST", `/runs/${holding}/stop`);
    await finished(first, [holding]);
  });

  it("lists an approval on every node and takes the answer given on another node than the run's", async () => {
    const run = await startRun(nodes[0] as DaemonProcess, "asker", "ask first");
    const pendingOn = async (node: DaemonProcess) =>
      ((await node.request("GET", "/approvals")).body as { approvals: PendingApproval[] }).approvals.find(
        (approval) => approval.run === run,
      );
    const waiting = await waitFor(async () => {
      const record = await getRun(nodes[0] as DaemonProcess, run);
      return record.status === "waiting" ? record : undefined;
    }, "the run to wait for its approval");
    const runningIndex = ids.indexOf(waiting.node ?? "");
    expect(runningIndex).toBeGreaterThanOrEqual(0);
    const elsewhere = nodes[(runningIndex + 1) % 3] as DaemonProcess;
    // Every node lists it (another node's a moment later).
    for (const node of nodes) await waitFor(() => pendingOn(node), "the approval on every node");
    const approval = (await pendingOn(elsewhere)) as PendingApproval;
    expect(approval.tool).toBe("shell");
    const reply = await elsewhere.request("POST", `/approvals/${approval.id}`, { decision: "approve" });
    expect(reply.status).toBe(200);
    const [ended] = await finished(elsewhere, [run]);
    expect(ended?.status).toBe("completed");
    const events = await runEvents(elsewhere, run);
    const observation = events.find((event) => event.type === "observation");
    expect(observation?.data).toMatchObject({ ok: true });
    expect(JSON.stringify(observation?.data)).toContain("approved-on-another-node");
    for (const node of nodes)
      await waitFor(async () => (await pendingOn(node)) === undefined, "no pending approval");
  });

  it("takes the answer to a question given on another node than the run's", async () => {
    const run = await startRun(nodes[1] as DaemonProcess, "questioner", "question first");
    const { elsewhere, question } = await questionElsewhere(run);
    const reply = await elsewhere.request("POST", `/questions/${question.id}`, { answer: "Blue" });
    expect(reply.body).toMatchObject({ run, answer: "blue" });
    const [ended] = await finished(elsewhere, [run]);
    expect(ended?.status).toBe("completed");
    const answered = (await runEvents(elsewhere, run)).find(
      (event) => event.type === "question" && event.data.state === "answered",
    );
    expect(answered?.data).toMatchObject({ answer: "blue" });
  });

  it("takes a 20 KB answer given on another node, and answers once the run's node has applied it", async () => {
    const run = await startRun(nodes[2] as DaemonProcess, "questioner", "free question first");
    const { elsewhere, question } = await questionElsewhere(run);
    const reply = await elsewhere.request("POST", `/questions/${question.id}`, { answer: LONG_ANSWER });
    expect(reply.status).toBe(200);
    expect((reply.body as { answer: string }).answer).toHaveLength(LONG_ANSWER.length);
    // Confirmed: the run's node took the answer before this node answered.
    const answered = (await runEvents(elsewhere, run)).find(
      (event) => event.type === "question" && event.data.state === "answered",
    );
    expect(answered?.data).toMatchObject({ answer: LONG_ANSWER });
    const [ended] = await finished(elsewhere, [run]);
    expect(ended?.status).toBe("completed");
    // A second answer finds nothing left to answer.
    const again = await elsewhere.request("POST", `/questions/${question.id}`, { answer: "more" });
    expect(again.status).toBe(404);
  });
});
