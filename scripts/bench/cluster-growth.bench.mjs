// Issue 28's "room to grow" bench, two measurements in the same run:
// (a) what one event write waits for as writers are added: 1, 3 and 10 writers ("nodes": each its
// own connection and node id, as each node has its own writer) write batches of events through the
// real write path (dist/store/postgres/write-batch.js, one transaction a batch), each node its own
// agents, as a cluster of nodes running different agents does. Per event: the write's latency
// (the batch's transaction, BEGIN to COMMIT, over its events) and its lock wait (the time spent in
// the statements that take locks: the run and counter rows, and in the `before` column the old
// cluster-wide advisory lock, taken first as every write did until migration 13). Both paths run
// in the same process on the same database, one after the other, so the ratio to one writer says
// what adding writers costs. Target: flat.
// (b) runs per second with 1, 2 and 3 real daemons (dist/cli/main.js start) on one PostgreSQL,
// answered by the scripted OpenAI-compatible server: RUNS runs posted round-robin, timed until
// every one has ended, printed as ratios to one node measured in the same run. The nodes are
// started once (3), measured, then killed one at a time (2, then 1): on a machine with fewer cores
// than nodes they share the CPU, and the ratio says what coordination costs there.
// (c) a node's memory with many runs in the database: HISTORY finished runs written straight into
// the runs table (copies of a real run's record), then a node started on it and its RSS read from
// /proc once it listens, against a node started on an empty database: run lists and old runs are
// read from the database, paged, so the ratio should stay near 1.
// (d) the events each node reads: 3 nodes, PLACED_AGENTS agents per node, each agent defined on
// every node but enabled (run) on one only, PLACED_RUNS runs of each posted to its node; once all
// ended, each node's agentd_store_events_read_total (summed over agents) over the events written
// in total. 1.0 is the old every-node-reads-everything; a node that reads only the agents it runs
// plus the others' notable events reads a little over 1/3.
// PostgreSQL is a real server on loopback started by the test harness's helper
// (test/support/postgres-server.ts), fsync off as in the tests. Skipped (exit 0) when PostgreSQL
// is not installed.
// Usage: node scripts/bench/cluster-growth.bench.mjs [--quick] (after a build). `--quick`: a few
// batches and runs, one repetition, 2 nodes where the full mode has 3 (what test/bench/quick-benches-*.test.ts
// run).
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { availableParallelism, loadavg, tmpdir } from "node:os";
import path from "node:path";
import { performance } from "node:perf_hooks";
import { setTimeout } from "node:timers/promises";
import pg from "pg";
import { stringify } from "yaml";
import { migrate } from "../../dist/store/postgres/migrations.js";
import { writeBatch } from "../../dist/store/postgres/write-batch.js";
import { importTestSupport } from "./test-support-import.mjs";

const QUICK = process.argv.includes("--quick");
const WRITER_COUNTS = [1, 3, 10];
/** Batches each writer writes per measurement, and events in a batch (a turn of a busy run). */
const BATCHES = QUICK ? 5 : 100;
const EVENTS_PER_BATCH = 5;
const REPETITIONS = QUICK ? 1 : 5;
/**
 * Largest first: nodes are stopped one by one between the counts. 10 nodes in the full mode only;
 * the quick mode (which checks that it runs, not what it measures) starts as few daemons as can
 * print a ratio: 2, then 1.
 */
const NODE_COUNTS = QUICK ? [2, 1] : [10, 3, 2, 1];
const RUNS = QUICK ? 6 : 150;
const RUN_REPETITIONS = QUICK ? 1 : 4;
const NODE_CONCURRENCY = 8;
/** (d): agents per node (each run on its node only) and runs of each. */
const PLACED_NODES = QUICK ? 2 : 3;
const PLACED_AGENTS = QUICK ? 2 : 10;
const PLACED_RUNS = QUICK ? 2 : 10;
/** Finished runs in the database for (c). */
const HISTORY = QUICK ? 200 : 200_000;
/** The lock every write transaction took before migration 13 (write-batch.ts), for the `before` column. */
const OLD_CHANGES_LOCK = 7_412_000_002;

function spread(values) {
  const sorted = [...values].sort((left, right) => left - right);
  return { median: sorted[Math.floor((sorted.length - 1) / 2)], min: sorted[0], max: sorted.at(-1) };
}

const format = (value, digits = 0) => value.toFixed(digits);
const range = (values, digits = 2) => {
  const { median, min, max } = spread(values);
  return `${format(median, digits)} [${format(min, digits)}–${format(max, digits)}]`;
};
const load = () =>
  loadavg()
    .map((value) => value.toFixed(2))
    .join(" ");

/**
 * A client whose statements are timed: the ones that take a lock (row locks, the old advisory
 * lock) add to `lockMilliseconds`. With `oldLock`, every transaction takes the old cluster-wide
 * lock first, as the write path did before.
 */
function timedClient(client, oldLock, totals) {
  return new Proxy(client, {
    get(target, property, receiver) {
      if (property !== "query") return Reflect.get(target, property, receiver);
      return async (text, values) => {
        const locking = /FOR UPDATE|FOR SHARE|pg_advisory_xact_lock/.test(text);
        const started = performance.now();
        const result = await target.query(text, values);
        if (text === "BEGIN" && oldLock) {
          const waited = performance.now();
          await target.query("SELECT pg_advisory_xact_lock($1)", [OLD_CHANGES_LOCK]);
          totals.lockMilliseconds += performance.now() - waited;
        }
        if (locking) totals.lockMilliseconds += performance.now() - started;
        return result;
      };
    },
  });
}

/** One writer ("node"): BATCHES batches of its own agent's events; its totals. */
async function writer(pool, node, oldLock) {
  const client = await pool.connect();
  const totals = { lockMilliseconds: 0, writeMilliseconds: 0, events: 0 };
  try {
    const timed = timedClient(client, oldLock, totals);
    for (let batch = 0; batch < BATCHES; batch++) {
      const operations = Array.from({ length: EVENTS_PER_BATCH }, (_, index) => ({
        kind: "event",
        draft: {
          agent: `agent-of-${node}`,
          run: null,
          type: "thought",
          data: { text: `step ${batch}.${index}: ${"reasoning ".repeat(12)}` },
          time: new Date().toISOString(),
        },
      }));
      const started = performance.now();
      await writeBatch(timed, node, operations);
      totals.writeMilliseconds += performance.now() - started;
      totals.events += operations.length;
    }
  } finally {
    client.release();
  }
  return totals;
}

/** `count` writers at once; mean lock wait and mean write latency per event (ms). */
async function writeRound(pool, count, oldLock, round) {
  const all = await Promise.all(
    Array.from({ length: count }, (_, index) => writer(pool, `n${round}-${index}`, oldLock)),
  );
  const events = all.reduce((sum, totals) => sum + totals.events, 0);
  return {
    lock: all.reduce((sum, totals) => sum + totals.lockMilliseconds, 0) / events,
    write: all.reduce((sum, totals) => sum + totals.writeMilliseconds, 0) / events,
  };
}

/** A daemon's folder (config.yaml, agents/worker.md, presets/, data/) on the shared database. */
function workspace(root, llmUrl, databaseUrl) {
  const folder = mkdtempSync(path.join(root, "node-"));
  for (const child of ["agents", "presets"]) mkdirSync(path.join(folder, child));
  writeFileSync(
    path.join(folder, "config.yaml"),
    stringify({
      agents_dir: "./agents",
      presets_dir: "./presets",
      data_dir: "./data",
      server: { host: "127.0.0.1", port: 0 },
      llm: { base_url: llmUrl, api_key: "bench-key", model: "scripted" },
      log: { level: "warn", pretty: false },
      store: { backend: "postgres", url: databaseUrl },
      concurrency: NODE_CONCURRENCY,
    }),
  );
  writeFileSync(
    path.join(folder, "agents", "worker.md"),
    `---\n${stringify({ description: "runs for the bench", limits: { max_concurrent_runs: 100 } })}---\nAnswer.\n`,
  );
  return path.join(folder, "config.yaml");
}

/**
 * A node of (d): every agent `a<n>-<k>` of every node defined, only its own (`n` = `index`)
 * enabled, so it serves the others' events and approvals but runs only its own.
 */
function placedWorkspace(root, llmUrl, databaseUrl, index) {
  const configFile = workspace(root, llmUrl, databaseUrl);
  const agents = path.join(path.dirname(configFile), "agents");
  rmSync(path.join(agents, "worker.md"));
  for (let node = 0; node < PLACED_NODES; node++)
    for (let agent = 0; agent < PLACED_AGENTS; agent++)
      writeFileSync(
        path.join(agents, `a${node}-${agent}.md`),
        `---\n${stringify({ description: "placed on one node", enabled: node === index })}---\nAnswer.\n`,
      );
  return configFile;
}

/** A node's agentd_store_events_read_total, summed over the agents. */
async function eventsRead(node) {
  const text = await globalThis
    .fetch(`${node.url}/metrics`, { headers: node.headers() })
    .then((reply) => reply.text());
  return text
    .split("\n")
    .filter((line) => line.startsWith("agentd_store_events_read_total{"))
    .reduce((sum, line) => sum + Number(line.split(" ").at(-1)), 0);
}

async function post(node, task, agent = "worker") {
  const reply = await node.request("POST", `/agents/${agent}/runs`, { task });
  if (reply.status !== 202) throw new Error(`POST /agents/${agent}/runs answered ${reply.status}`);
  return reply.body.run;
}

/** Waits until every run of `ids` ended completed, as `reader` reads them one by one. */
async function completed(reader, ids) {
  const pending = new Set(ids);
  const deadline = Date.now() + 180_000;
  while (pending.size > 0) {
    if (Date.now() > deadline) throw new Error(`${pending.size} runs had not ended after 180 s`);
    for (const id of [...pending]) {
      const reply = await reader.request("GET", `/runs/${id}`);
      const status = reply.body?.status;
      if (status === "completed") pending.delete(id);
      else if (status !== undefined && !["queued", "running", "paused"].includes(status))
        throw new Error(`run ${id} ended ${status}`);
    }
    if (pending.size > 0) await setTimeout(20);
  }
}

/** Starts a node on `configFile`, reads its RSS (MB) once it listens, and kills it. */
async function startedRss(daemons, configFile) {
  const node = await daemons.startDaemonProcess({ configFile });
  try {
    const status = readFileSync(`/proc/${node.pid}/status`, "utf8");
    return Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0) / 1_024;
  } finally {
    await node.kill();
  }
}

/** Posts RUNS runs round-robin over `nodes`; runs per second until all of them ended. */
async function runThroughput(nodes, label) {
  const started = performance.now();
  const ids = await Promise.all(
    Array.from({ length: RUNS }, (_, index) => post(nodes[index % nodes.length], `${label} job ${index}`)),
  );
  await completed(nodes[0], ids);
  return RUNS / ((performance.now() - started) / 1_000);
}

const helper = await importTestSupport("test/support/postgres-server.ts");
const missing = helper.postgresMissingReason();
if (missing !== undefined) {
  console.log(`skipped: ${missing}`);
  process.exit(0);
}
const postgres = await helper.startPostgres();
const root = mkdtempSync(path.join(tmpdir(), "agentd-bench-growth-"));
const writes = { before: new Map(), after: new Map() };
const throughput = new Map(NODE_COUNTS.map((count) => [count, []]));
const loads = [];
const memory = {};
const placed = { written: 0, read: [] };
try {
  const pool = new pg.Pool({ connectionString: await postgres.createDatabase("growth_writes"), max: 12 });
  await migrate(pool);
  try {
    // A warm-up round, not counted (none in the quick mode, which checks that it runs); then each
    // repetition measures every count, both paths.
    for (let round = QUICK ? 1 : 0; round <= REPETITIONS; round++) {
      for (const count of WRITER_COUNTS)
        for (const [name, oldLock] of [
          ["before", true],
          ["after", false],
        ]) {
          const measured = await writeRound(pool, count, oldLock, `${round}${name}${count}`);
          if (round === 0) continue;
          const list = writes[name].get(count) ?? [];
          list.push(measured);
          writes[name].set(count, list);
        }
      loads.push(loadavg()[0]);
    }
  } finally {
    await pool.end();
  }

  const daemons = await importTestSupport("test/support/daemon-process.ts");
  const scripted = await importTestSupport("test/support/scripted-llm-server.ts");
  const llm = await scripted.startScriptedLlmServer();
  llm.setDefaultReply(() => scripted.textReply("done"));
  const databaseUrl = await postgres.createDatabase("growth_runs");
  const nodes = [];
  try {
    // Started at once, as a cluster's nodes may be (migrations wait on their advisory lock): nothing
    // is measured before every node listens.
    nodes.push(
      ...(await Promise.all(
        Array.from({ length: NODE_COUNTS[0] }, () =>
          daemons.startDaemonProcess({ configFile: workspace(root, llm.url, databaseUrl) }),
        ),
      )),
    );
    // Warm-up on all nodes, not counted (none in the quick mode, which checks that it runs).
    if (!QUICK) await runThroughput(nodes, "warm-up");
    for (const count of NODE_COUNTS) {
      while (nodes.length > count) await nodes.pop().kill();
      for (let round = 0; round < RUN_REPETITIONS; round++)
        throughput.get(count).push(await runThroughput(nodes, `${count} nodes round ${round}`));
      loads.push(loadavg()[0]);
    }
    for (const node of nodes.splice(0)) await node.kill();

    // (c): an empty database, then the one above with HISTORY more finished runs. The quick mode
    // (which checks that it runs, not what it measures) starts the two nodes at once.
    const emptyUrl = await postgres.createDatabase("growth_empty");
    const emptyRss = () => startedRss(daemons, workspace(root, llm.url, emptyUrl));
    const emptyStarted = QUICK ? emptyRss() : undefined;
    if (!QUICK) memory.empty = await emptyRss();
    const history = new pg.Client({ connectionString: databaseUrl });
    await history.connect();
    try {
      const started = performance.now();
      await history.query(
        `INSERT INTO agentd_runs (id, agent, node, status, created_at, ended_at, record, change, claimed_by)
         SELECT 'h_' || g, r.agent, r.node, r.status, r.created_at, r.ended_at,
           replace(r.record, r.id, 'h_' || g), nextval('agentd_changes'), r.claimed_by
         FROM (SELECT * FROM agentd_runs WHERE status = 'completed' LIMIT 1) AS r, generate_series(1, $1) AS g`,
        [HISTORY],
      );
      memory.writeSeconds = (performance.now() - started) / 1_000;
      const counted = await history.query("SELECT count(*)::int AS count FROM agentd_runs");
      memory.runs = counted.rows[0].count;
    } finally {
      await history.end();
    }
    memory.history = await startedRss(daemons, workspace(root, llm.url, databaseUrl));
    if (emptyStarted !== undefined) memory.empty = await emptyStarted;

    // (d): each node runs its own agents only; what each reads of all that was written.
    const placedUrl = await postgres.createDatabase("growth_placed");
    nodes.push(
      ...(await Promise.all(
        Array.from({ length: PLACED_NODES }, (_, index) =>
          daemons.startDaemonProcess({ configFile: placedWorkspace(root, llm.url, placedUrl, index) }),
        ),
      )),
    );
    const placedIds = await Promise.all(
      nodes.flatMap((node, index) =>
        Array.from({ length: PLACED_AGENTS * PLACED_RUNS }, (_, run) =>
          post(node, `placed job ${run}`, `a${index}-${run % PLACED_AGENTS}`),
        ),
      ),
    );
    // Ended as every node lists them: each has read what it reads of them.
    for (const node of nodes) await completed(node, placedIds);
    const counters = new pg.Client({ connectionString: placedUrl });
    await counters.connect();
    try {
      placed.written = (
        await counters.query("SELECT coalesce(sum(last_id), 0)::int AS total FROM agentd_event_counters")
      ).rows[0].total;
    } finally {
      await counters.end();
    }
    for (const node of nodes) placed.read.push(await eventsRead(node));
    loads.push(loadavg()[0]);
    for (const node of nodes.splice(0)) await node.kill();
  } finally {
    for (const node of nodes) await node.kill();
    await llm.close();
  }
} finally {
  await postgres.stop();
  rmSync(root, { recursive: true, force: true });
}

console.log(
  `(a) per event, ${BATCHES} batches of ${EVENTS_PER_BATCH} events per writer, each writer its own agent, ${REPETITIONS} repetitions, median [min–max] ms:`,
);
for (const [name, title] of [
  ["before", "before (one cluster-wide advisory lock)"],
  ["after", "after (per-agent counter rows)"],
]) {
  console.log(`  ${title}:`);
  const one = writes[name].get(1);
  for (const count of WRITER_COUNTS) {
    const list = writes[name].get(count);
    console.log(
      `    ${String(count).padStart(2)} writers: lock wait ${range(
        list.map((value) => value.lock),
        3,
      )}, write ${range(
        list.map((value) => value.write),
        3,
      )}`,
    );
  }
  const ratio = (count) =>
    spread(writes[name].get(count).map((value) => value.write)).median /
    spread(one.map((value) => value.write)).median;
  console.log(`    write latency ratio ${name} 10/1: ${format(ratio(10), 2)}x, 3/1: ${format(ratio(3), 2)}x`);
}
console.log(
  `(b) ${RUNS} runs posted round-robin, concurrency ${NODE_CONCURRENCY} per node, ${RUN_REPETITIONS} repetitions, median [min–max]:`,
);
const oneNode = spread(throughput.get(1)).median;
for (const count of [...NODE_COUNTS].reverse())
  console.log(`  ${count} node${count === 1 ? " " : "s"}: ${range(throughput.get(count), 1)} runs/s`);
console.log(
  `  runs/s ratio to 1 node: ${NODE_COUNTS.filter((count) => count > 1)
    .reverse()
    .map((count) => `${count} nodes ${format(spread(throughput.get(count)).median / oneNode, 2)}x`)
    .join(", ")} (of the medians)`,
);
console.log(
  `(c) a node's RSS once it listens: empty database ${format(memory.empty, 1)} MB, ${memory.runs} runs in the database ${format(memory.history, 1)} MB (written in ${format(memory.writeSeconds, 1)} s)`,
);
console.log(`  RSS ratio many runs / empty: ${format(memory.history / memory.empty, 2)}x`);
console.log(
  `(d) events read per node / events written in total (1.0 = every node reads everything), ${PLACED_NODES} nodes, ${PLACED_AGENTS} agents each run on one node, ${PLACED_RUNS} runs of each, ${placed.written} events written:`,
);
console.log(
  `  ${placed.read.map((read, index) => `node ${index + 1} ${format(read / placed.written, 2)}`).join(", ")}; mean ${format(
    placed.read.reduce((sum, read) => sum + read, 0) / placed.read.length / placed.written,
    2,
  )}`,
);
console.log(
  `  cores: ${availableParallelism()}, load average now: ${load()}, 1-min load over the run: ${range(loads, 1)}`,
);
