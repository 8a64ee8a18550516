import { existsSync, mkdirSync, readdirSync } from "node:fs";
import path from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import type { RunRecord } from "../../src/run-vocabulary/run-record.js";
import { getRun, runEvents, startRun } from "../daemon/api-shapes.js";
import type { DaemonProcess } from "../support/daemon-process.js";
import { type PausableProxy, startPausableProxy } from "../support/pausable-proxy.js";
import { type PostgresCluster, startPostgresCluster } from "../support/postgres-cluster.js";
import { postgresMissingReason } from "../support/postgres-server.js";
import { type RecordedRequest, textReply, toolCallReply } from "../support/scripted-llm-server.js";
import { useTestKit } from "../support/test-kit.js";
import { waitFor } from "../support/wait-for.js";

const missing = postgresMissingReason();
/** A short lease keeps the test fast; every wait below is on readiness, bounded generously. */
const LEASE_MILLISECONDS = 2_000;
const WAIT_MILLISECONDS = 60_000;

/** Model answers to tasks naming a word wait until the test opens that word's gate. */
const gates = new Map<string, { open: () => void; opened: Promise<void> }>();
function gate(word: string): { open: () => void; opened: Promise<void> } {
  let entry = gates.get(word);
  if (entry === undefined) {
    let open = () => undefined as void;
    const opened = new Promise<void>((resolve) => {
      open = resolve;
    });
    entry = { open, opened };
    gates.set(word, entry);
  }
  return entry;
}

function roundOf(request: RecordedRequest): number {
  return (request.body?.messages ?? []).filter((message) => message.role === "assistant").length + 1;
}

function taskOf(request: RecordedRequest): string {
  return String(request.body?.messages.find((message) => message.role === "user")?.content ?? "");
}

/** Tool calls of a run that reached this node's workdir (one file per round). */
function filesOf(cluster: PostgresCluster, index: number, word: string): string[] {
  const folder = path.join((cluster.projects[index] as { root: string }).root, "work");
  return existsSync(folder) ? readdirSync(folder).filter((name) => name.startsWith(word)) : [];
}

async function health(daemon: DaemonProcess): Promise<{ status: string; store?: { lease_held?: boolean } }> {
  return (await daemon.request("GET", "/health")).body as { status: string };
}

async function statusOf(reader: DaemonProcess, run: string, wanted: (record: RunRecord) => boolean) {
  return waitFor(
    async () => {
      const record = await getRun(reader, run);
      return wanted(record) ? record : undefined;
    },
    `run ${run} to change`,
    WAIT_MILLISECONDS,
  );
}

/**
 * The chaos the issue measured, on a real PostgreSQL with real daemons: a node frozen past its
 * lease, a node cut from PostgreSQL by a proxy that holds packets, and the database stopped for
 * longer than the lease. Counted from the other node's view and from the tools' side effects (one
 * file per tool call, in the workdir of the node that ran it).
 */
describe.skipIf(missing !== undefined)(
  "a cluster node that cannot renew its lease",
  { timeout: 240_000 },
  () => {
    const kit = useTestKit("file");
    let cluster: PostgresCluster;
    let proxy: PausableProxy;

    beforeAll(async () => {
      // The proxy listens before the cluster's config names its port; it forwards to PostgreSQL's.
      let postgresPort = 0;
      proxy = await startPausableProxy(() => postgresPort);
      kit.defer(() => proxy.close());
      cluster = await startPostgresCluster(kit, {
        lease: LEASE_MILLISECONDS,
        nodes: 3,
        storeUrl: (index, url) => {
          const target = new URL(url);
          postgresPort = Number(target.port);
          if (index !== 2) return url;
          target.port = String(proxy.port);
          return target.toString();
        },
        reply: async (request) => {
          const task = taskOf(request);
          const word = task.split(" ")[0] ?? "";
          const round = roundOf(request);
          // Round 2 of every task waits at its gate; rounds 1 to 3 each write one file.
          if (round >= 2) await gate(word).opened;
          if (round <= 3)
            return toolCallReply({
              name: "write_file",
              arguments: { path: `${word}-round-${round}.txt`, content: `round ${round}` },
            });
          return textReply(`${word} done`);
        },
        config: () => ({ shutdown: { grace: "1s" } }),
        agents: (project, index) => {
          mkdirSync(path.join(project.root, "work"));
          const writer = { workdir: "work", tools: ["write_file"], permissions: { allow: ["write_file"] } };
          project.writeAgent("steady", { ...writer, resume: true, limits: { max_concurrent_runs: 4 } });
          // Only the node behind the proxy serves this one.
          if (index === 2) project.writeAgent("cut", writer);
        },
      });
    }, 180_000);

    /** Model requests of a task at a round (or later), every node's. */
    const asked = (word: string, round: number) =>
      cluster.llm.chatRequests.filter(
        (request) => taskOf(request).startsWith(`${word} `) && roundOf(request) >= round,
      ).length;

    it("a node frozen past its lease runs no tool call and lands no event once it wakes", async () => {
      const reader = cluster.nodes[0] as DaemonProcess;
      const run = await startRun(reader, "steady", "frozen task");
      const first = await statusOf(reader, run, (record) => record.status === "running");
      const index = cluster.ids.indexOf(first.node ?? "");
      const frozen = cluster.nodes[index] as DaemonProcess;
      const watcher = cluster.nodes.find((_node, other) => other !== index && other !== 2) as DaemonProcess;
      // Round 1's tool ran on the frozen node; its model call for round 2 waits at the gate.
      await waitFor(
        () => (filesOf(cluster, index, "frozen").length === 1 && asked("frozen", 2) >= 1) || undefined,
        "round 1 to run",
        WAIT_MILLISECONDS,
      );
      frozen.signal("SIGSTOP");
      try {
        // Another node takes it for dead and resumes the run from its checkpoint: it asks for round 2.
        await statusOf(watcher, run, (record) => record.status === "running" && record.node !== first.node);
        await waitFor(
          () => asked("frozen", 2) >= 2 || undefined,
          "the resumed run's model call",
          WAIT_MILLISECONDS,
        );
        // Both answers go out: the frozen node's waits in its socket until it wakes.
        gate("frozen").open();
        await statusOf(watcher, run, (record) => record.status === "completed");
      } finally {
        frozen.signal("SIGCONT");
      }
      // Awake, it finds its lease gone, lets the run go, and joins again.
      await waitFor(
        async () => (await health(frozen)).status === "ok" || undefined,
        "the frozen node back",
        WAIT_MILLISECONDS,
      );
      const holder = cluster.ids.indexOf((await getRun(watcher, run)).node ?? "");
      expect(holder).not.toBe(index);
      // 0 tool calls on the frozen node after its lease: only round 1's file is there.
      expect(filesOf(cluster, index, "frozen")).toEqual(["frozen-round-1.txt"]);
      expect(filesOf(cluster, holder, "frozen").sort()).toEqual(["frozen-round-2.txt", "frozen-round-3.txt"]);
      // 0 events of it landed: one action per tool call run, as every node sees them.
      // 0 events of it landed after the takeover: past the run's `failed` (crashed) status, one
      // action per tool call the new holder ran, as every other node sees them. (Round 1's events
      // being written when the node froze were dropped with its lease: they may be missing.)
      const actionsAfterTakeover = async (node: DaemonProcess) => {
        const events = await runEvents(node, run);
        const crashed = events.findIndex(
          (event) => event.type === "status" && event.data.status === "failed",
        );
        return crashed < 0 ? 0 : events.slice(crashed).filter((event) => event.type === "action").length;
      };
      for (const node of cluster.nodes.filter((other) => other !== frozen)) {
        await waitFor(
          async () => (await actionsAfterTakeover(node)) >= 2 || undefined,
          "the run's events",
          WAIT_MILLISECONDS,
        );
        expect(await actionsAfterTakeover(node)).toBe(2);
      }
      expect(frozen.stderr()).toContain("this node's lease had expired");
    });

    it("a node cut from PostgreSQL by a proxy that holds packets leaves ok and answers POSTs with 503", async () => {
      const cut = cluster.nodes[2] as DaemonProcess;
      await waitFor(
        async () => (await health(cut)).status === "ok" || undefined,
        "the node to be ok",
        WAIT_MILLISECONDS,
      );
      proxy.hold();
      try {
        const seen = await waitFor(
          async () => {
            const body = await health(cut);
            return body.status === "ok" ? undefined : body;
          },
          "the cut node to leave ok",
          WAIT_MILLISECONDS,
        );
        expect(seen).toMatchObject({
          status: "store_unavailable",
          store: { connected: false, lease_held: false },
        });
        // A new run is refused at once rather than left hanging on a database it cannot reach.
        const reply = await Promise.race([
          cut.request("POST", "/agents/cut/runs", { task: "cut task" }),
          new Promise<never>((_, reject) =>
            setTimeout(() => reject(new Error("the POST hung")), WAIT_MILLISECONDS).unref(),
          ),
        ]);
        expect(reply.status).toBe(503);
        expect(JSON.stringify(reply.body)).toContain("STORE_UNAVAILABLE");
      } finally {
        proxy.release();
      }
      await waitFor(
        async () => (await health(cut)).status === "ok" || undefined,
        "the cut node back",
        WAIT_MILLISECONDS,
      );
      // And it works again: a run of its own agent completes.
      gate("cut").open();
      const run = await startRun(cut, "cut", "cut again");
      await statusOf(cut, run, (record) => record.status === "completed");
    });

    it("after the database is away for longer than the lease, no healthy run is marked crashed", async () => {
      const reader = cluster.nodes[0] as DaemonProcess;
      const words = ["outageA", "outageB", "outageC", "outageD"];
      const runs = await Promise.all(words.map((word) => startRun(reader, "steady", `${word} task`)));
      // Each is in its round 2 model call, waiting at its gate.
      await waitFor(
        () => words.every((word) => asked(word, 2) >= 1) || undefined,
        "round 2 of every run",
        WAIT_MILLISECONDS,
      );
      await cluster.postgres.pause();
      const pausedAt = Date.now();
      try {
        for (const node of cluster.nodes)
          await waitFor(
            async () => (await health(node)).status !== "ok" || undefined,
            "every node to see the outage",
            WAIT_MILLISECONDS,
          );
        // The outage lasts longer than the lease (its length is the scenario, not a bound checked).
        await waitFor(
          () => Date.now() - pausedAt > 2 * LEASE_MILLISECONDS || undefined,
          "the outage to outlast the lease",
        );
      } finally {
        await cluster.postgres.resume();
      }
      for (const node of cluster.nodes)
        await waitFor(
          async () => (await health(node)).status === "ok" || undefined,
          "every node back",
          WAIT_MILLISECONDS,
        );
      for (const word of words) gate(word).open();
      for (const run of runs) {
        const record = await statusOf(reader, run, (found) => found.ended_at !== undefined);
        expect(record).toMatchObject({ status: "completed" });
        const events = await runEvents(reader, run);
        expect(events.filter((event) => event.type === "status" && event.data.status === "failed")).toEqual(
          [],
        );
        expect(events.filter((event) => event.type === "action")).toHaveLength(3);
      }
    });
  },
);
