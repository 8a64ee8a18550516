// Issue 15's scale-out bench, two ratios measured in the same run:
// (a) event append throughput of the two stores behind the store interface: the files in data_dir
// against PostgreSQL. Each store is opened the way the
// daemon opens it (its event log behind the event store, on the bus the store asks for); the clock
// runs from the first publish until a listener subscribed after the event store has seen every
// event, i.e. written to the files, or committed to PostgreSQL and delivered by the change feed.
// PostgreSQL is a real server on loopback, started by the test harness's helper
// (test/support/postgres-server.ts, transpiled on the fly; as root it runs as an unprivileged user),
// with fsync off as in the tests, so the ratio is the cost of the round trips, not of the disk.
// (b) runs per second through 1 daemon node against 3 nodes on one PostgreSQL: real daemons
// (dist/cli/main.js start, via test/support/daemon-process.ts) answered by the scripted
// OpenAI-compatible server (test/support/scripted-llm-server.ts), RUNS runs posted round-robin,
// timed until every one has ended. Each node has its own process, so on a machine with fewer cores
// than nodes the 3 nodes share the CPU and the ratio says what the coordination costs there.
// (c) the claiming path, on the same nodes: CLAIM_RUNS runs posted one after the other,
// round-robin, each run's time from its POST to its `started_at` (set by the node that claimed it,
// as the run goes `running`): the 202 once the row is committed, the NOTIFY, the claim transaction
// (SKIP LOCKED, the agent's advisory lock and count), the start. Slots are free throughout, so no
// run waits for one; the figure is the median, with the 90th percentile, over all rounds.
// Skipped (exit 0) when PostgreSQL is not installed.
// Usage: node --expose-gc scripts/bench/store.bench.mjs [--quick] (after a build). `--quick`: a few
// events and runs, one repetition, 2 nodes where the full mode has 3.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { availableParallelism, loadavg, tmpdir } from "node:os";
import path from "node:path";
import { performance } from "node:perf_hooks";
import { setTimeout } from "node:timers/promises";
import { stringify } from "yaml";
import { EventBus } from "../../dist/events/event-bus.js";
import { EventStore } from "../../dist/events/event-store.js";
import { createLogger } from "../../dist/logging/logger.js";
import { openFilesStore } from "../../dist/store/files-store.js";
import { openPostgresStore } from "../../dist/store/postgres/postgres-store.js";
import { QUICK } from "./bench-daemon.mjs";
import { importTestSupport } from "./test-support-import.mjs";

/** Events appended per measurement, spread over a few agents as a busy daemon would. */
const EVENTS = QUICK ? 200 : 5_000;
const AGENTS = 4;
const REPETITIONS = QUICK ? 1 : 5;
/** Runs posted per measurement of (b), and how many each node runs at once. */
const RUNS = QUICK ? 10 : 200;
const NODE_CONCURRENCY = 8;
const RUN_REPETITIONS = QUICK ? 1 : 5;
/** Uncounted rounds before the counted ones: none in the quick mode, which only checks that it runs. */
const WARM_UP_ROUNDS = QUICK ? 0 : 1;
/**
 * The nodes measured against one node in (b) and (c): 3, or 2 in the quick mode, which checks that
 * it runs (a daemon start is most of its cost), not what it measures.
 */
const CLUSTER_NODES = QUICK ? 2 : 3;
/** Runs posted one at a time per round of (c). */
const CLAIM_RUNS = QUICK ? 4 : 40;
const logger = createLogger({ level: "silent", pretty: false });

function draft(index) {
  return {
    agent: `agent-${index % AGENTS}`,
    run: null,
    type: "thought",
    data: { text: `Looking at step ${index}: ${"reasoning ".repeat(12)}` },
  };
}

/** Appends EVENTS events through `store`; events per second until the last one is seen. */
async function appendThroughput(store, dataDirectory) {
  const bus = store.createBus?.({ redact: (value) => value, now: () => new Date() }) ?? new EventBus();
  const events = await EventStore.open({ dataDirectory, bufferSize: 1_000, bus, logger, log: store.events });
  await store.start();
  let seen = 0;
  let resolveAll;
  const all = new Promise((resolve) => (resolveAll = resolve));
  bus.subscribe(() => {
    if (++seen === EVENTS) resolveAll();
  });
  const started = performance.now();
  for (let index = 0; index < EVENTS; index++) bus.publish(draft(index));
  await all;
  const seconds = (performance.now() - started) / 1_000;
  events.close();
  await store.close();
  return EVENTS / seconds;
}

function spread(values) {
  const sorted = [...values].sort((left, right) => left - right);
  return { median: sorted[Math.floor(sorted.length / 2)], min: sorted[0], max: sorted.at(-1) };
}

const format = (value, digits = 0) => value.toFixed(digits);

const helper = await importTestSupport("test/support/postgres-server.ts");
const missing = helper.postgresMissingReason();
if (missing !== undefined) {
  console.log(`skipped: ${missing}`);
  process.exit(0);
}
const postgres = await helper.startPostgres();
const root = mkdtempSync(path.join(tmpdir(), "agentd-bench-store-"));
const files = [];
const database = [];
const ratios = [];
try {
  // A warm-up of each, not counted: the first round pays for JIT and the first connections.
  for (let round = 0; round < WARM_UP_ROUNDS + REPETITIONS; round++) {
    const directory = path.join(root, `files-${round}`);
    mkdirSync(directory);
    const filesRate = await appendThroughput(openFilesStore({ dataDirectory: directory, logger }), directory);
    const url = await postgres.createDatabase(`bench_${round}`);
    const pgDirectory = path.join(root, `pg-${round}`);
    mkdirSync(pgDirectory);
    const postgresRate = await appendThroughput(
      await openPostgresStore({ url, leaseMilliseconds: 30_000, bufferSize: 1_000, logger }),
      pgDirectory,
    );
    if (round < WARM_UP_ROUNDS) continue;
    files.push(filesRate);
    database.push(postgresRate);
    ratios.push(postgresRate / filesRate);
  }
} catch (error) {
  await postgres.stop();
  rmSync(root, { recursive: true, force: true });
  throw error;
}

/** A daemon's folder (config.yaml, agents/worker.md, presets/, data/) on the shared database. */
function workspace(llmUrl, databaseUrl) {
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
      events: { buffer_size: 5_000 },
      concurrency: NODE_CONCURRENCY,
    }),
  );
  writeFileSync(
    path.join(folder, "agents", "worker.md"),
    `---\n${stringify({ description: "runs for the bench", limits: { max_concurrent_runs: 100 } })}---\nAnswer.\n`,
  );
  return path.join(folder, "config.yaml");
}

async function post(node, task) {
  const reply = await node.request("POST", "/agents/worker/runs", { task });
  if (reply.status !== 202) throw new Error(`POST /agents/worker/runs answered ${reply.status}`);
  return reply.body.run;
}

/** Waits until every run of `ids` completed (as `reader` lists them); their records. */
async function completed(reader, ids) {
  const pending = new Set(ids);
  const records = [];
  const deadline = Date.now() + 120_000;
  while (pending.size > 0) {
    if (Date.now() > deadline) {
      const stuck = await Promise.all(
        [...pending].map(async (id) => (await reader.request("GET", `/runs/${id}`)).body),
      );
      throw new Error(`${pending.size} runs had not ended after 120 s: ${JSON.stringify(stuck)}`);
    }
    const reply = await reader.request("GET", "/runs?agent=worker&limit=1000");
    for (const run of reply.body.runs) {
      if (!pending.has(run.id)) continue;
      if (run.status === "completed") {
        pending.delete(run.id);
        records.push(run);
      } else if (!["queued", "running", "paused"].includes(run.status)) {
        throw new Error(`run ${run.id} ended ${run.status}${run.reason ? `/${run.reason}` : ""}`);
      }
    }
    if (pending.size > 0) await setTimeout(10);
  }
  return records;
}

/** Posts RUNS runs round-robin over `nodes`; runs per second until all of them ended. */
async function runThroughput(nodes, round) {
  const started = performance.now();
  const ids = await Promise.all(
    Array.from({ length: RUNS }, (_, index) =>
      post(nodes[index % nodes.length], `round ${round} job ${index}`),
    ),
  );
  await completed(nodes[0], ids);
  return RUNS / ((performance.now() - started) / 1_000);
}

/** Posts CLAIM_RUNS runs one after the other round-robin over `nodes`; each one's ms from POST to started_at. */
async function claimLatencies(nodes, round) {
  const postedAt = new Map();
  for (let index = 0; index < CLAIM_RUNS; index++) {
    const before = Date.now();
    postedAt.set(await post(nodes[index % nodes.length], `claim round ${round} job ${index}`), before);
  }
  const records = await completed(nodes[0], [...postedAt.keys()]);
  return records.map((record) => Date.parse(record.started_at) - postedAt.get(record.id));
}

/**
 * Starts `count` nodes on a fresh database; RUN_REPETITIONS measurements of (b) and of (c) after a
 * warm-up of each (none in the quick mode).
 */
async function clusterThroughput(count, llmUrl) {
  const databaseUrl = await postgres.createDatabase(`bench_nodes_${count}`);
  const nodes = [];
  try {
    for (let index = 0; index < count; index++) {
      nodes.push(await daemons.startDaemonProcess({ configFile: workspace(llmUrl, databaseUrl) }));
    }
    const rates = [];
    const latencies = [];
    for (let round = 0; round < WARM_UP_ROUNDS + RUN_REPETITIONS; round++) {
      const rate = await runThroughput(nodes, round);
      const claimed = await claimLatencies(nodes, round);
      if (round < WARM_UP_ROUNDS) continue;
      rates.push(rate);
      latencies.push(...claimed);
    }
    return { rates, latencies };
  } finally {
    for (const node of nodes) await node.kill();
  }
}

const daemons = await importTestSupport("test/support/daemon-process.ts");
const scripted = await importTestSupport("test/support/scripted-llm-server.ts");
const llm = await scripted.startScriptedLlmServer();
llm.setDefaultReply(() => scripted.textReply("done"));
let oneNode;
let clusterNodes;
try {
  oneNode = await clusterThroughput(1, llm.url);
  clusterNodes = await clusterThroughput(CLUSTER_NODES, llm.url);
} finally {
  await llm.close();
  await postgres.stop();
  rmSync(root, { recursive: true, force: true });
}

const range = (values, digits = 0) => {
  const { median, min, max } = spread(values);
  return `${format(median, digits)} [${format(min, digits)}–${format(max, digits)}]`;
};
console.log(
  `(a) event append, ${EVENTS} events over ${AGENTS} agents, ${REPETITIONS} repetitions, median [min–max]:`,
);
console.log(`  files (baseline): ${range(files)} events/s`);
console.log(`  postgres:         ${range(database)} events/s`);
console.log(`  ratio postgres / files: ${range(ratios, 2)}x`);
console.log(
  `(b) ${RUNS} runs posted round-robin, concurrency ${NODE_CONCURRENCY} per node, ${RUN_REPETITIONS} repetitions, median [min–max]:`,
);
console.log(`  1 node (baseline): ${range(oneNode.rates, 1)} runs/s`);
console.log(`  ${CLUSTER_NODES} nodes:           ${range(clusterNodes.rates, 1)} runs/s`);
console.log(
  `  ratio ${CLUSTER_NODES} nodes / 1 node:  ${format(spread(clusterNodes.rates).median / spread(oneNode.rates).median, 2)}x (of the medians)`,
);
const percentile = (values, fraction) =>
  [...values].sort((left, right) => left - right)[Math.floor(fraction * (values.length - 1))];
const latency = (values) =>
  `median ${format(percentile(values, 0.5))} ms, p90 ${format(percentile(values, 0.9))} ms [min ${format(percentile(values, 0))}–max ${format(percentile(values, 1))}]`;
console.log(
  `(c) POST to running, ${CLAIM_RUNS} runs posted one after the other round-robin, ${RUN_REPETITIONS} repetitions, ${RUN_REPETITIONS * CLAIM_RUNS} runs:`,
);
console.log(`  1 node (baseline): ${latency(oneNode.latencies)}`);
console.log(`  ${CLUSTER_NODES} nodes:           ${latency(clusterNodes.latencies)}`);
console.log(
  `  ratio ${CLUSTER_NODES} nodes / 1 node:  ${format(percentile(clusterNodes.latencies, 0.5) / percentile(oneNode.latencies, 0.5), 2)}x (of the medians)`,
);
console.log(
  `  cores: ${availableParallelism()}, load average: ${loadavg()
    .map((value) => value.toFixed(2))
    .join(" ")}`,
);
