import pg from "pg";
import { beforeAll, describe, expect, it } from "vitest";
import type { AgentEvent } from "../../src/events/agent-event.js";
import type { RunRecord } from "../../src/run-vocabulary/run-record.js";
import { MIGRATIONS, migrate } from "../../src/store/postgres/migrations.js";
import { agentEvents, getRun, listRuns, runEvents, startRun } from "../daemon/api-shapes.js";
import type { DaemonProcess } from "../support/daemon-process.js";
import { type PostgresCluster, startPostgresCluster } from "../support/postgres-cluster.js";
import { postgresMissingReason } from "../support/postgres-server.js";
import { textReply } from "../support/scripted-llm-server.js";
import { useTestKit } from "../support/test-kit.js";
import { waitFor } from "../support/wait-for.js";

const missing = postgresMissingReason();
const LEASE_MILLISECONDS = 5_000;
/** A model answer that comes after a node frozen past its lease has woken up. */
const LATE_ANSWER_MILLISECONDS = 12_000;

/** Three real daemons on one real PostgreSQL: one system. */
describe.skipIf(missing !== undefined)("three daemons on one PostgreSQL", { timeout: 240_000 }, () => {
  const kit = useTestKit("file");
  let cluster: PostgresCluster;
  let nodes: DaemonProcess[] = [];
  let firesFrom = 0;

  beforeAll(async () => {
    // Nodes start one after the other here, but each migrates under the advisory lock anyway.
    cluster = await startPostgresCluster(kit, {
      reply: (request) => {
        const messages = JSON.stringify(request.body?.messages ?? []);
        if (messages.includes("hang forever")) return { type: "hang" };
        if (messages.includes("answer late"))
          return textReply("late answer", { delayBeforeFirstChunkMs: LATE_ANSWER_MILLISECONDS });
        return textReply("done");
      },
      nodes: 3,
      lease: LEASE_MILLISECONDS,
      config: () => ({ events: { buffer_size: 5_000 }, concurrency: 20 }),
      agents: (project) => {
        // overlap: queue, so a tick slowed down by a loaded machine does not skip the next fire.
        project.writeAgent("ticker", { schedule: { cron: "* * * * * *", task: "tick", overlap: "queue" } });
        project.writeAgent("worker", { limits: { max_concurrent_runs: 50 } });
        project.writeAgent("slow", {});
      },
    });
    nodes = cluster.nodes;
    // From the first whole second after every node is up.
    firesFrom = Math.ceil(Date.now() / 1_000) * 1_000 + 1_000;
  }, 180_000);

  /**
   * Once every node lists the run running: its node lists it as soon as it starts, the others
   * once that is committed. Before then, a node killed or frozen leaves the run queued in the
   * database, and another node runs it (rightly).
   */
  function runningEverywhere(run: string): Promise<RunRecord> {
    return waitFor(async () => {
      const records = await Promise.all(nodes.map((node) => getRun(node, run)));
      return records.every((record) => record.status === "running") ? records[0] : undefined;
    }, "every node to list the run running").catch(async (error: unknown) => {
      throw await explained(error, { run });
    });
  }

  /**
   * A wait for a run that failed, with the run as each node lists it, what each node logged
   * (warnings and errors only: every node logs every run's start and end, the ticker's too) and the
   * record when it was seen running: the timing tests below failed only in loaded full runs, where
   * the output is all there is.
   */
  async function explained(
    error: unknown,
    seen: { run: string; started?: RunRecord; suspect?: DaemonProcess; what?: string },
  ): Promise<Error> {
    const name = (node: DaemonProcess) =>
      `node ${cluster.ids[nodes.indexOf(node)] ?? "?"}${node === seen.suspect ? ` (${seen.what ?? "suspect"})` : ""}`;
    const views = await Promise.all(
      nodes.map(async (node) => {
        const health = (await node.request("GET", "/health")).body as { store?: unknown };
        return `${name(node)} lists: ${JSON.stringify(await getRun(node, seen.run))}, store: ${JSON.stringify(health.store)}`;
      }),
    );
    const logs = nodes.map((node) => {
      const lines = node.stderr().split("\n");
      const notable = lines.filter((line) => !line.startsWith('{"level":30') && line.trim() !== "");
      return `${name(node)}:\n${notable.slice(-30).join("\n")}`;
    });
    return new Error(
      `${String(error)}\nwhen running: ${JSON.stringify(seen.started)}\n${views.join("\n")}\n${logs.join("\n---\n")}`,
    );
  }

  it("migrates once when several nodes start at the same moment", async () => {
    const url = await cluster.postgres.createDatabase("concurrent_start");
    const pools = [0, 1, 2].map(() => new pg.Pool({ connectionString: url }));
    const versions = await Promise.all(pools.map((pool) => migrate(pool)));
    expect(new Set(versions)).toEqual(new Set([MIGRATIONS.at(-1)?.version]));
    const applied = await pools[0]?.query("SELECT count(*)::int AS count FROM agentd_migrations");
    expect(applied?.rows[0]).toEqual({ count: MIGRATIONS.length });
    await Promise.all(pools.map((pool) => pool.end()));
  });

  it("completes 100 runs posted round-robin once each, with gap-free event ids per agent", async () => {
    const ids: string[] = [];
    for (let index = 0; index < 100; index++) {
      ids.push(await startRun(nodes[index % 3] as DaemonProcess, "worker", `job ${index}`));
    }
    const reader = nodes[1] as DaemonProcess;
    const records = await waitFor(
      async () => {
        const found = await Promise.all(ids.map((id) => getRun(reader, id)));
        return found.every((record) => record.status === "completed") ? found : undefined;
      },
      "100 completed runs",
      120_000,
    );
    expect(records).toHaveLength(100);
    const events: AgentEvent[] = await agentEvents(reader, "worker", 0);
    const eventIds = events.map((event) => event.id);
    expect(eventIds).toEqual(eventIds.map((_, index) => index + 1));
    for (const id of ids) {
      const ends = events.filter(
        (event) => event.run === id && event.type === "status" && event.data.status === "completed",
      );
      expect(ends).toHaveLength(1);
    }
    // Every node serves the same ids.
    expect((await agentEvents(nodes[2] as DaemonProcess, "worker", 0)).map((event) => event.id)).toEqual(
      eventIds,
    );
  });

  it("wakes a long poll on one node for an event written by another", async () => {
    const [first, second] = nodes as [DaemonProcess, DaemonProcess];
    const after = (await agentEvents(first, "worker", 0)).at(-1)?.id ?? 0;
    const poll = first.request("GET", `/agents/worker/events?after=${after}&wait=30`);
    await startRun(second, "worker", "wake the poll");
    const reply = await poll;
    const woken = (reply.body as { events: AgentEvent[] }).events;
    expect(woken.length).toBeGreaterThan(0);
    expect(woken[0]?.id).toBe(after + 1);
  });

  // The ticker has fired since the nodes started, under the load of the tests before this one: the
  // fires of that time, or of at least ten seconds, are counted rather than waited for again.
  it("fires a one-second schedule once per second across the nodes, never twice for one second", async () => {
    const to = Math.max(Math.floor(Date.now() / 1_000) * 1_000 - 1_000, firesFrom + 10_000);
    // A fire's run is recorded a moment after its second: wait until the last one counted is in.
    await waitFor(async () => (Date.now() > to + 2_000 ? true : undefined), "the fires to count", 60_000);
    const runs = await listRuns(nodes[0] as DaemonProcess, "?agent=ticker&limit=1000");
    const fired = runs
      .map((run) => ("scheduled_for" in run.trigger ? Date.parse(run.trigger.scheduled_for) : Number.NaN))
      .filter((time) => time >= firesFrom && time < to);
    const seconds = (to - firesFrom) / 1_000;
    expect(new Set(fired).size).toBe(fired.length);
    expect(fired.length).toBeGreaterThanOrEqual(seconds - 1);
    expect(fired.length).toBeLessThanOrEqual(seconds + 1);
  });

  // A node alive but silent past its lease (a machine under load, a long GC pause, a VM stopped):
  // the others take it for dead and end its runs; once it runs again, its run must not go on and
  // write over the record, nor run twice.
  it("stops the runs of a node frozen past its lease and keeps the record the other node wrote", async () => {
    const run = await startRun(nodes[1] as DaemonProcess, "slow", "answer late");
    const started = await runningEverywhere(run);
    const frozen = cluster.nodeWithId(started.node);
    const watcher = nodes[(nodes.indexOf(frozen) + 1) % 3] as DaemonProcess;
    frozen.signal("SIGSTOP");
    const ended = await waitFor(
      async () => {
        const record = await getRun(watcher, run);
        return record.status === "failed" ? record : undefined;
      },
      "another node to end the frozen node's run",
      LEASE_MILLISECONDS * 10,
    )
      .catch(async (error: unknown) => {
        throw await explained(error, { run, started, suspect: frozen, what: "frozen" });
      })
      .finally(() => frozen.signal("SIGCONT"));
    expect(ended).toMatchObject({ status: "failed", reason: "crashed" });
    // Awake, it finds its lease gone (or its write refused) and stops the run without a record.
    await waitFor(
      async () =>
        frozen
          .stderr()
          .split("\n")
          .some((line) => line.includes(run) && /without a record|were refused/.test(line))
          ? true
          : undefined,
      "the frozen node to let the run go",
      LEASE_MILLISECONDS * 10,
    );
    // Its lease renewal and its refused write race on two connections: either may be logged first.
    await waitFor(
      () => frozen.stderr().includes("this node's lease had expired"),
      "the frozen node to find its lease gone",
      LEASE_MILLISECONDS * 10,
    );
    // Past the moment the model answered the frozen node's request, nothing of the run changed.
    const answered = Date.parse(started.started_at ?? "") + LATE_ANSWER_MILLISECONDS;
    await waitFor(
      async () => (Date.now() > answered + 1_000 ? true : undefined),
      "the time of the late answer to pass",
      LATE_ANSWER_MILLISECONDS * 3,
    );
    for (const node of nodes)
      expect(await getRun(node, run)).toMatchObject({ status: "failed", reason: "crashed" });
    const statuses = (await runEvents(watcher, run))
      .filter((event) => event.type === "status")
      .map((event) => event.data.status);
    expect(statuses).not.toContain("completed");
    // It joined again: it answers, and a run posted to it completes.
    const after = await startRun(frozen, "worker", "after the freeze");
    await waitFor(async () => {
      const record = await getRun(frozen, after);
      return record.status === "completed" ? record : undefined;
    }, "a run posted to the woken node to complete").catch(async (error: unknown) => {
      throw await explained(error, { run: after, suspect: frozen, what: "woken" });
    });
  });

  it("ends the runs of a node killed with -9 as failed (crashed) on another node within the lease", async () => {
    const run = await startRun(nodes[2] as DaemonProcess, "slow", "hang forever");
    // Whichever node claimed it runs it: that one is killed, another one watches.
    const started = await runningEverywhere(run);
    const running = cluster.nodeWithId(started.node);
    const first = nodes[(nodes.indexOf(running) + 1) % 3] as DaemonProcess;
    await running.kill();
    const ended: RunRecord = await waitFor(
      async () => {
        const record = await getRun(first, run);
        return record.status === "failed" ? record : undefined;
      },
      "the run to end on another node",
      LEASE_MILLISECONDS * 10,
    ).catch(async (error: unknown) => {
      throw await explained(error, { run, started, suspect: running, what: "killed" });
    });
    expect(ended.reason).toBe("crashed");
    const after = (await first.request("GET", "/health")).body as {
      store: { backend: string; connected: boolean };
    };
    expect(after.store).toMatchObject({ backend: "postgres", connected: true });
  });
});
