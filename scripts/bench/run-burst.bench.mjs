// A burst of 200 concurrent POST /agents/:id/runs: the slowest 202 of the daemon against the slowest
// answer of a bare fastify route taking the same 200 POSTs in the same run, and the longest
// event-loop block in each process during its burst (perf_hooks.monitorEventLoopDelay).
// The daemon is built by the real composition root (dist/app/daemon.js) with its run records,
// event logs and API; the model keeps every run waiting until the end. The client and the model
// server run in a worker thread, so they do not
// share the measured event loop. Each 202's run record is checked on disk when the answer arrives:
// what the API reported must survive a kill -9.
// Each burst is measured ROUNDS times, the bare route and the daemon alternating, so a change in the
// machine's load hits both; the figures are the median of the rounds and their range. The warm-up's
// runs start before the measured burst (as many as the concurrency allows), not during it.
// Beside the wall times, the serving thread's own CPU time during each burst (this process's main
// thread, from /proc/self/task/<pid>/schedstat): it is what the daemon's work costs, and it moves
// far less with the machine's load than the slowest answer does.
// Targets: slowest 202 within 1.3x the bare route's slowest; longest block under 50 ms.
// Usage: node scripts/bench/run-burst.bench.mjs [--quick] [--rounds=<n>] [--cpu-prof-dir=<dir>]
// (after a build). `--cpu-prof-dir`: a CPU profile of the main thread during each measured burst.
import {
  closeSync,
  existsSync,
  fdatasync,
  fstatSync,
  mkdirSync,
  openSync,
  readFileSync,
  readdirSync,
  readSync,
  rmSync,
  writeSync,
} from "node:fs";
import { Buffer } from "node:buffer";
import { cpus, loadavg } from "node:os";
import path from "node:path";
import { monitorEventLoopDelay, performance } from "node:perf_hooks";
import { URL } from "node:url";
import { Worker, isMainThread, parentPort } from "node:worker_threads";
import { QUICK, createBenchProject, serveFinalAnswers, spread, startBenchDaemon } from "./bench-daemon.mjs";
import { startThreadProfile } from "./thread-profile.mjs";

const RUNS = QUICK ? 20 : 200;
const WARMUP_RUNS = QUICK ? 4 : 20;
/** Rounds of bare route then daemon; the order is swapped every other round. */
const ROUNDS = Number(argument("--rounds=") ?? (QUICK ? 1 : 7));
const PROFILE_DIRECTORY = argument("--cpu-prof-dir=");
/**
 * Runs in flight at once in the daemon (the rest stay queued): the default (4), where the burst is
 * mostly creating runs, and 100, where half of them also start their worker during the burst.
 */
const CONCURRENCIES = QUICK ? [4] : [4, 100];
/** The model answers each run after this long: runs are still waiting when the burst is over. */
const ANSWER_DELAY_MILLISECONDS = 60_000;
const TARGET_RATIO = 1.3;
const TARGET_BLOCK_MILLISECONDS = 50;

if (!isMainThread) {
  await serveModelAndClient();
} else {
  await main();
}

/** Worker thread: a model server that answers late, and the client that sends the bursts. */
async function serveModelAndClient() {
  const port = await serveFinalAnswers({ delayMilliseconds: ANSWER_DELAY_MILLISECONDS });
  parentPort.postMessage({ port });
  let lastUrl;
  parentPort.on("message", async ({ url, token, runs, runsDirectory }) => {
    // A new server (a new port) writes a new data folder: what was read of the last one is dropped.
    if (url !== lastUrl) journalReads.clear();
    lastUrl = url;
    const started = performance.now();
    const answers = await Promise.all(
      Array.from({ length: runs }, async (_, index) => {
        const sent = performance.now();
        const response = await globalThis.fetch(`${url}/agents/burst/runs`, {
          method: "POST",
          headers: { "content-type": "application/json", authorization: `Bearer ${token}` },
          body: JSON.stringify({ task: `task ${index}` }),
        });
        const body = await response.json();
        const answered = performance.now();
        // Reported means on disk: the run must be in its record file or in the open-runs journal
        // (`runs/open/<n>.jsonl`, where a new run's whole record is appended) the moment the 202
        // arrives.
        const onDisk =
          existsSync(path.join(runsDirectory, `${body.run}.json`)) ||
          inOpenRunsJournal(runsDirectory, body.run);
        return { status: response.status, latency: answered - sent, onDisk };
      }),
    );
    parentPort.postMessage({ answers, seconds: (performance.now() - started) / 1000 });
  });
}

/** The value of `--name=value` on the command line, if given. */
function argument(prefix) {
  return process.argv.find((value) => value.startsWith(prefix))?.slice(prefix.length);
}

/**
 * The run ids read so far from the open-runs journal (`<runs>/open/*.jsonl`), by file: each check
 * reads only what was appended since the last one (whole lines), so checking 200 answers costs the
 * client thread the journal's bytes once, not 200 times (which delayed the daemon's answers only).
 */
const journalReads = new Map();

/** Whether a line of the open-runs journal (`<runs>/open/*.jsonl`) names the run. */
function inOpenRunsJournal(runsDirectory, run) {
  const journal = path.join(runsDirectory, "open");
  if (!existsSync(journal)) return false;
  for (const file of readdirSync(journal).filter((name) => name.endsWith(".jsonl"))) {
    const full = path.join(journal, file);
    let read = journalReads.get(full);
    if (!read) journalReads.set(full, (read = { offset: 0, runs: new Set() }));
    if (read.runs.has(run)) return true;
    let descriptor;
    try {
      descriptor = openSync(full, "r");
    } catch {
      continue; // begun afresh and deleted meanwhile
    }
    try {
      const size = fstatSync(descriptor).size;
      if (size < read.offset) read.offset = 0;
      const bytes = Buffer.alloc(size - read.offset);
      const length = readSync(descriptor, bytes, 0, bytes.length, read.offset);
      const text = bytes.toString("utf8", 0, bytes.subarray(0, length).lastIndexOf(10) + 1);
      read.offset += Buffer.byteLength(text);
      for (const match of text.matchAll(/"(r_[0-9a-z]+)"/g)) read.runs.add(match[1]);
    } finally {
      closeSync(descriptor);
    }
    if (read.runs.has(run)) return true;
  }
  return false;
}

/** This thread's CPU time so far in milliseconds (Linux; undefined elsewhere). */
function threadCpuMilliseconds() {
  try {
    const text = readFileSync(`/proc/self/task/${process.pid}/schedstat`, "utf8");
    return Number(text.split(" ")[0]) / 1e6;
  } catch {
    return undefined;
  }
}

/** Starts profiling this thread when asked to (--cpu-prof-dir); returns what stops it. */
function startProfile(name) {
  return startThreadProfile(PROFILE_DIRECTORY, name);
}

/** Sends `runs` POSTs at once from the worker; resolves with their answers. */
function burst(client, target, runs) {
  const answered = new Promise((resolve) =>
    client.on("message", function listener(message) {
      if (!message.answers) return;
      client.off("message", listener);
      resolve(message);
    }),
  );
  client.postMessage({ ...target, runs });
  return answered;
}

/**
 * A measured burst: the answers' latencies and the longest event-loop delay meanwhile. With
 * `startedFirst`, the warm-up's runs that can start have started before it (at concurrency 100,
 * 20 launches would otherwise land in the measured burst, which measures a burst, not the one before).
 */
async function measureBurst(client, target, name, startedFirst = 0) {
  await burst(client, target, WARMUP_RUNS);
  if (startedFirst > 0) await waitForRunning(target, startedFirst);
  const stopProfile = await startProfile(name);
  const histogram = monitorEventLoopDelay({ resolution: 1 });
  histogram.enable();
  const cpuBefore = threadCpuMilliseconds();
  const { answers, seconds } = await burst(client, target, RUNS);
  const cpu = cpuBefore === undefined ? Number.NaN : threadCpuMilliseconds() - cpuBefore;
  histogram.disable();
  await stopProfile();
  const latencies = answers.map((answer) => answer.latency).sort((left, right) => left - right);
  return {
    seconds,
    cpu,
    accepted: answers.filter((answer) => answer.status === 202).length,
    notOnDisk: answers.filter((answer) => answer.status === 202 && !answer.onDisk).length,
    p50: latencies[Math.floor(latencies.length / 2)],
    slowest: latencies.at(-1),
    longestBlock: histogram.max / 1e6,
  };
}

/** Resolves once `count` runs are running (they wait for the model until the daemon stops). */
async function waitForRunning({ url, token }, count) {
  for (;;) {
    const response = await globalThis.fetch(`${url}/runs?status=running&limit=1000`, {
      headers: { authorization: `Bearer ${token}` },
    });
    const { runs } = await response.json();
    if (runs.length >= count) return;
    await new Promise((resolve) => globalThis.setTimeout(resolve, 10));
  }
}

/** The baseline: fastify's 202 route, nothing else, in this process. */
async function measureBareRoute(client, runsDirectory, round) {
  const { default: Fastify } = await import("fastify");
  const app = Fastify();
  let next = 0;
  app.post("/agents/:id/runs", async (_request, reply) => reply.code(202).send({ run: `bare-${next++}` }));
  await app.listen({ host: "127.0.0.1", port: 0 });
  const url = `http://127.0.0.1:${app.server.address().port}`;
  const figures = await measureBurst(client, { url, token: "", runsDirectory }, `bare-${round}`);
  await app.close();
  return figures;
}

/**
 * A second floor, for information: the bare route doing the I/O agentd's answer waits for, at its
 * least. Each request's line (its run and body) joins one write per turn of the event loop to a
 * kept descriptor, and the 202 goes once that turn's write is followed by an fdatasync of the file
 * on libuv's threads (agentd also writes an index line, the record in the journal, two events and
 * an audit entry, and fdatasyncs the audit trail per turn). The target stays against the plain route.
 */
async function measureBareRouteWithWrites(client, root, round) {
  const { default: Fastify } = await import("fastify");
  const folder = path.join(root, "bare-writes");
  mkdirSync(folder, { recursive: true });
  const descriptor = openSync(path.join(folder, `${round}.jsonl`), "a");
  let pending = [];
  const flush = () => {
    const batch = pending;
    pending = [];
    writeSync(descriptor, batch.map(({ line }) => line).join(""));
    fdatasync(descriptor, (error) =>
      batch.forEach(({ resolve, reject }) => (error ? reject(error) : resolve())),
    );
  };
  const append = (line) =>
    new Promise((resolve, reject) => {
      if (pending.length === 0) globalThis.setImmediate(flush);
      pending.push({ line, resolve, reject });
    });
  const app = Fastify();
  let next = 0;
  app.post("/agents/:id/runs", async (request, reply) => {
    const run = `bare-${next++}`;
    await append(`${JSON.stringify({ run, agent: request.params.id, ...request.body })}\n`);
    return reply.code(202).send({ run });
  });
  await app.listen({ host: "127.0.0.1", port: 0 });
  const url = `http://127.0.0.1:${app.server.address().port}`;
  const figures = await measureBurst(
    client,
    { url, token: "", runsDirectory: path.join(root, "data", "runs") },
    `bare-writes-${round}`,
  );
  await app.close();
  closeSync(descriptor);
  rmSync(folder, { recursive: true, force: true });
  return figures;
}

async function measureDaemon(client, root, modelPort, concurrency, round) {
  const dataDirectory = path.join(root, "data");
  rmSync(dataDirectory, { recursive: true, force: true });
  const daemon = await startBenchDaemon({
    root,
    modelPort,
    // The runs still wait for the model at the end: stopped at once, not after the default 30 s.
    settings: { concurrency, limits: { max_concurrent_runs: RUNS + WARMUP_RUNS }, shutdown: { grace: 100 } },
  });
  const runsDirectory = path.join(dataDirectory, "runs");
  const figures = await measureBurst(
    client,
    { url: daemon.url, token: daemon.token, runsDirectory },
    `agentd-${concurrency}-${round}`,
    Math.min(WARMUP_RUNS, concurrency),
  );
  await daemon.shutdown();
  return figures;
}

async function main() {
  const client = new Worker(new URL(import.meta.url));
  const { port } = await new Promise((resolve) => client.once("message", resolve));
  const root = createBenchProject("agentd-bench-burst-", {
    burst: "---\ndescription: started in bursts\ntask: answer\n---\nAnswer the task.\n",
  });

  const bare = [];
  const bareWithWrites = [];
  const daemons = new Map(CONCURRENCIES.map((concurrency) => [concurrency, []]));
  for (let round = 0; round < ROUNDS; round++) {
    // The bare route's client checks a folder the daemon has not made yet: removed, in every round.
    rmSync(path.join(root, "data"), { recursive: true, force: true });
    const measureBare = () => measureBareRoute(client, path.join(root, "data", "runs"), round);
    const measureBareWithWrites = () => measureBareRouteWithWrites(client, root, round);
    // Bare first in even rounds, last in odd ones, so a drift of the load falls on both sides.
    const baseline = round % 2 === 0 ? await measureBare() : undefined;
    const writesFloor = round % 2 === 0 ? await measureBareWithWrites() : undefined;
    const measured = [];
    for (const concurrency of CONCURRENCIES) {
      measured.push([concurrency, await measureDaemon(client, root, port, concurrency, round)]);
    }
    const withWrites = writesFloor ?? (await measureBareWithWrites());
    const floor = baseline ?? (await measureBare());
    bare.push(floor);
    bareWithWrites.push(withWrites);
    for (const [concurrency, figures] of measured)
      daemons.get(concurrency).push({
        ...figures,
        ratio: figures.slowest / floor.slowest,
        cpuRatio: figures.cpu / floor.cpu,
        writesRatio: figures.slowest / withWrites.slowest,
      });
  }
  await client.terminate();
  rmSync(root, { recursive: true, force: true });

  const milliseconds = (values) => {
    const { median, min, max } = spread(values);
    return `${median.toFixed(1)} ms (${min.toFixed(1)}–${max.toFixed(1)})`;
  };
  const line = (name, rounds) =>
    console.log(
      `${name.padEnd(26)} ${rounds.map((figures) => figures.accepted).join("/")} of ${RUNS} answered 202: ` +
        `p50 ${milliseconds(rounds.map((figures) => figures.p50))}, ` +
        `slowest ${milliseconds(rounds.map((figures) => figures.slowest))}, ` +
        `thread CPU ${milliseconds(rounds.map((figures) => figures.cpu))}, ` +
        `longest loop block ${milliseconds(rounds.map((figures) => figures.longestBlock))}`,
    );
  console.log(
    `${RUNS} concurrent POST /agents/:id/runs (after ${WARMUP_RUNS} to warm up), ${ROUNDS} rounds: median (min–max); ` +
      `${cpus().length} cores, load average ${loadavg()[0].toFixed(1)}`,
  );
  line("bare fastify route", bare);
  line("bare route + write, fsync", bareWithWrites);
  let failed = false;
  for (const [concurrency, rounds] of daemons) {
    line(`agentd, concurrency ${concurrency}`, rounds);
    const ratio = spread(rounds.map((figures) => figures.ratio));
    const block = spread(rounds.map((figures) => figures.longestBlock));
    const cpuRatio = spread(rounds.map((figures) => figures.cpuRatio));
    const writesRatio = spread(rounds.map((figures) => figures.writesRatio));
    const notOnDisk = rounds.reduce((sum, figures) => sum + figures.notOnDisk, 0);
    console.log(
      `  ratio slowest 202 agentd/bare: ${ratio.median.toFixed(2)}x (${ratio.min.toFixed(2)}–${ratio.max.toFixed(2)}; ` +
        `target <= ${TARGET_RATIO}x: ${ratio.median <= TARGET_RATIO ? "met" : "MISSED"}); ` +
        `longest block ${block.median.toFixed(1)} ms (target < ${TARGET_BLOCK_MILLISECONDS} ms: ` +
        `${block.median < TARGET_BLOCK_MILLISECONDS ? "met" : "MISSED"}); ` +
        `202 answers whose run was not on disk yet: ${notOnDisk}`,
    );
    console.log(
      `  ratio thread CPU agentd/bare: ${cpuRatio.median.toFixed(2)}x (${cpuRatio.min.toFixed(2)}–${cpuRatio.max.toFixed(2)}); ` +
        `slowest 202 agentd/(bare route + write, fsync): ${writesRatio.median.toFixed(2)}x (${writesRatio.min.toFixed(2)}–${writesRatio.max.toFixed(2)}); ` +
        `the daemon's thread over the bare route's: ${(((spread(rounds.map((figures) => figures.cpu)).median - spread(bare.map((figures) => figures.cpu)).median) / RUNS) * 1000).toFixed(0)} µs a request`,
    );
    if (rounds.some((figures) => figures.accepted !== RUNS) || notOnDisk > 0) failed = true;
  }
  if (failed) process.exitCode = 1;
}
