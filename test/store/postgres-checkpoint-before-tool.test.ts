import { existsSync, mkdirSync } from "node:fs";
import path from "node:path";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { AgentEvent } from "../../src/events/agent-event.js";
import { agentEvents, getRun, runEvents, startRun } from "../daemon/api-shapes.js";
import type { DaemonProcess } from "../support/daemon-process.js";
import { type PostgresCluster, startPostgresCluster } from "../support/postgres-cluster.js";
import { postgresMissingReason } from "../support/postgres-server.js";
import { textReply, toolCallReply } from "../support/scripted-llm-server.js";
import { useTestKit } from "../support/test-kit.js";
import { waitFor } from "../support/wait-for.js";

const missing = postgresMissingReason();
/** Runs of `chatty` watched to their end at once, and the tool calls of each. */
const CHATTY_RUNS = 8;
const CHATTY_CALLS = 3;

/**
 * What one node on PostgreSQL commits and serves before what. "A tool call is never run again"
 * rests on the checkpoint that records the call being committed before the call runs: the test
 * holds the checkpoints table locked, so the daemon's write of the round's checkpoint cannot
 * commit, and looks at the tool's side effect meanwhile. And a run served ended has its events
 * served up to its ending status.
 */
describe.skipIf(missing !== undefined)("commit order on one PostgreSQL node", { timeout: 120_000 }, () => {
  const kit = useTestKit("file");
  let cluster: PostgresCluster;
  let locker: pg.Client;

  beforeAll(async () => {
    cluster = await startPostgresCluster(kit, {
      nodes: 1,
      reply: (request) => {
        const messages = request.body?.messages ?? [];
        const results = messages.filter((message) => message.role === "tool").length;
        if (JSON.stringify(messages).includes("list a few times"))
          return results < CHATTY_CALLS
            ? // Each call another spelling of the same folder: the same call repeated would end the run.
              toolCallReply({ name: "list_dir", arguments: { path: `.${"/.".repeat(results)}` } })
            : textReply("listed");
        return results > 0
          ? textReply("written")
          : toolCallReply({ name: "write_file", arguments: { path: "marker.txt", content: "ran" } });
      },
      agents: (project) => {
        mkdirSync(path.join(project.root, "work"));
        project.writeAgent("writer", {
          workdir: "work",
          tools: ["write_file"],
          permissions: { allow: ["write_file"] },
          resume: true,
        });
        project.writeAgent("chatty", {
          tools: ["list_dir"],
          permissions: { allow: ["list_dir"] },
          limits: { max_concurrent_runs: CHATTY_RUNS },
        });
      },
    });
    locker = new pg.Client({ connectionString: cluster.postgres.url });
    await locker.connect();
  }, 90_000);

  afterAll(async () => {
    await locker?.end();
  });

  it("runs a tool call only once the checkpoint that records it is committed", async () => {
    const node = cluster.nodes[0] as DaemonProcess;
    const marker = path.join(cluster.projects[0]?.root ?? "", "work", "marker.txt");
    await locker.query("BEGIN");
    await locker.query("LOCK TABLE agentd_checkpoints IN SHARE MODE");
    const run = await startRun(node, "writer", "write the marker");
    // The model asked for the call, and the daemon's write is stuck behind the lock.
    await cluster.llm.waitForChatRequests(1);
    await waitFor(async () => {
      const waiting = await locker.query(
        "SELECT count(*)::int AS n FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND pid <> pg_backend_pid()",
      );
      return (waiting.rows[0] as { n: number }).n > 0 ? true : undefined;
    }, "the daemon's checkpoint write to wait for the lock");
    // Without the commit the call must not run: give it ample time to run if it would.
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    expect(existsSync(marker)).toBe(false);

    await locker.query("COMMIT");
    await waitFor(async () => {
      const record = await getRun(node, run);
      return record.status === "completed" ? record : undefined;
    }, `run ${run} to complete`);
    expect(existsSync(marker)).toBe(true);
  });

  it("serves a run ended only once its events up to its ending status are served too", async () => {
    const node = cluster.nodes[0] as DaemonProcess;
    const ids: string[] = [];
    for (let index = 0; index < CHATTY_RUNS; index++)
      ids.push(await startRun(node, "chatty", `list a few times ${index}`));
    // Each run watched as a client does, as often as the daemon answers: the moment its record
    // says it ended, the agent's events (what a long poll returns at once) and the run's log.
    const seen = await Promise.all(
      ids.map(async (run) => {
        for (;;) {
          const record = await getRun(node, run);
          if (record.ended_at === undefined) continue;
          const [polled, logged] = await Promise.all([agentEvents(node, "chatty"), runEvents(node, run)]);
          return { record, polled, logged };
        }
      }),
    );
    for (const { record, polled, logged } of seen) {
      expect(record.status).toBe("completed");
      const isEnd = (event: AgentEvent) =>
        event.run === record.id && event.type === "status" && event.data.status === "completed";
      expect(logged.at(-1)).toSatisfy(isEnd);
      // Every event of the run up to its end, in the agent's events already.
      const polledIds = new Set(polled.map((event) => event.id));
      expect(logged.filter((event) => !polledIds.has(event.id))).toEqual([]);
      expect(polled.filter(isEnd)).toHaveLength(1);
    }
  });
});
