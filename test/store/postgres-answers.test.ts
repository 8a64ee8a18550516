import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { getRun, runEvents, startRun } from "../daemon/api-shapes.js";
import type { DaemonProcess } from "../support/daemon-process.js";
import { type PostgresCluster, startPostgresCluster } from "../support/postgres-cluster.js";
import { postgresMissingReason } from "../support/postgres-server.js";
import { textReply, toolCallReply } from "../support/scripted-llm-server.js";
import { useTestKit } from "../support/test-kit.js";
import { waitFor } from "../support/wait-for.js";

const missing = postgresMissingReason();
const LEASE_MILLISECONDS = 4_000;

/**
 * An answer acknowledged on another node than the run's is not lost when the run's node dies:
 * it is in the run's log before the 200, and the run resumed elsewhere from its checkpoint (saved
 * before the answer) takes it as the result of the interrupted `ask_human` call.
 */
describe.skipIf(missing !== undefined)("answers on a cluster", { timeout: 180_000 }, () => {
  const kit = useTestKit("file");
  let cluster: PostgresCluster;
  let locker: pg.Client;
  /** The model's call after the answer waits while this holds: the run's node dies before it returns. */
  let holdAfterAnswer = true;
  /** The nodes still running (the first test kills one). */
  let alive: DaemonProcess[] = [];

  beforeAll(async () => {
    cluster = await startPostgresCluster(kit, {
      nodes: 2,
      lease: LEASE_MILLISECONDS,
      reply: (request) => {
        const results = (request.body?.messages ?? []).filter((message) => message.role === "tool");
        if (results.length === 0)
          return toolCallReply({
            name: "ask_human",
            arguments: { question: "Which colour?", choices: ["red", "blue"] },
          });
        if (holdAfterAnswer) return { type: "hang" };
        return textReply(`got: ${String(results[0]?.content)}`);
      },
      agents: (project) =>
        project.writeAgent("questioner", {
          resume: true,
          tools: ["ask_human"],
          permissions: { allow: ["ask_human"] },
        }),
    });
    locker = new pg.Client({ connectionString: cluster.postgres.url });
    await locker.connect();
    alive = [...cluster.nodes];
  }, 120_000);

  afterAll(async () => {
    await locker?.end().catch(() => undefined);
  });

  it("gives a resumed run the answer acknowledged before its node was killed", async () => {
    const run = await startRun(cluster.nodes[0] as DaemonProcess, "questioner", "ask me");
    const owner = await waitFor(async () => {
      const record = await getRun(cluster.nodes[0] as DaemonProcess, run);
      return record.status === "waiting" && record.node ? record.node : undefined;
    }, "the run to wait for its answer");
    const runNode = cluster.nodeWithId(owner);
    const elsewhere = cluster.nodes.find((node) => node !== runNode) as DaemonProcess;
    const question = await waitFor(async () => {
      const reply = await elsewhere.request("GET", "/questions");
      return (reply.body as { questions: Array<{ id: string; run: string }> }).questions.find(
        (pending) => pending.run === run,
      );
    }, "the question on the other node");
    // The run's checkpoint cannot change from now on: the one to resume from predates the answer.
    await locker.query("BEGIN");
    const held = await locker.query("SELECT 1 FROM agentd_checkpoints WHERE run = $1 FOR UPDATE", [run]);
    expect(held.rowCount).toBe(1);

    const reply = await elsewhere.request("POST", `/questions/${question.id}`, { answer: "Blue" });
    expect(reply.status).toBe(200);
    // Acknowledged means recorded: the answer is in the run's log in the database.
    const logged = await locker.query<{ line: string }>(
      "SELECT line FROM agentd_events WHERE run = $1 AND line LIKE '%\"answered\"%'",
      [run],
    );
    expect(logged.rowCount).toBe(1);

    await runNode.kill();
    alive = alive.filter((node) => node !== runNode);
    holdAfterAnswer = false;
    await locker.query("COMMIT");

    const before = cluster.llm.chatRequests.length;
    const ended = await waitFor(
      async () => {
        const record = await getRun(elsewhere, run);
        return record.status === "completed" ? record : undefined;
      },
      "the run to be resumed and completed on the other node",
      60_000,
    );
    expect(ended.result).toBe("got: blue");
    const resumedRequest = cluster.llm.chatRequests.slice(before).at(-1);
    const toolMessage = (resumedRequest?.body?.messages ?? []).find((message) => message.role === "tool");
    expect(toolMessage?.content).toBe("blue");
    const events = await runEvents(elsewhere, run);
    expect(
      events.filter((event) => event.type === "question" && event.data.state === "answered"),
    ).toHaveLength(1);
    expect(events.some((event) => event.type === "status" && event.data.status === "failed")).toBe(true);
  });

  it("acknowledges an answer on the run's own node only once its event is committed", async () => {
    const [node] = alive as [DaemonProcess];
    const run = await startRun(node, "questioner", "ask me again");
    const owner = await waitFor(async () => {
      const record = await getRun(node, run);
      return record.status === "waiting" && record.node ? record.node : undefined;
    }, "the run to wait for its answer");
    const runNode = cluster.nodeWithId(owner);
    const question = await waitFor(async () => {
      const reply = await runNode.request("GET", "/questions");
      return (reply.body as { questions: Array<{ id: string; run: string }> }).questions.find(
        (pending) => pending.run === run,
      );
    }, "the question on the run's node");
    await locker.query("BEGIN");
    await locker.query("LOCK TABLE agentd_events IN SHARE MODE");
    let answered = false;
    const reply = runNode.request("POST", `/questions/${question.id}`, { answer: "red" }).then((value) => {
      answered = true;
      return value;
    });
    // The answer's event cannot commit: give the API ample time to answer if it would.
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    expect(answered).toBe(false);
    await locker.query("COMMIT");
    expect((await reply).status).toBe(200);
    const logged = await locker.query(
      "SELECT 1 FROM agentd_events WHERE run = $1 AND line LIKE '%\"answered\"%'",
      [run],
    );
    expect(logged.rowCount).toBe(1);
  });
});
