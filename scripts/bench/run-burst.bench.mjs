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
// Targets: slowest 202 within 1.3x the bare route's slowest; longest block under 50 ms.
// Usage: node scripts/bench/run-burst.bench.mjs (after a build).
import { existsSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { cpus, loadavg } from "node:os";
import path from "node:path";
import { monitorEventLoopDelay, performance } from "node:perf_hooks";
import { URL } from "node:url";
import { Worker, isMainThread, parentPort } from "node:worker_threads";
import { QUICK, createBenchProject, serveFinalAnswers, spread, startBenchDaemon } from "./bench-daemon.mjs";

const RUNS = QUICK ? 20 : 200;
const WARMUP_RUNS = QUICK ? 4 : 20;
const ROUNDS = QUICK ? 1 : 3;
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
  parentPort.on("message", async ({ url, token, runs, runsDirectory }) => {
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

/** Whether a line of the open-runs journal (`<runs>/open/*.jsonl`) names the run. */
function inOpenRunsJournal(runsDirectory, run) {
  const journal = path.join(runsDirectory, "open");
  if (!existsSync(journal)) return false;
  return readdirSync(journal)
    .filter((file) => file.endsWith(".jsonl"))
    .some((file) => readFileSync(path.join(journal, file), "utf8").includes(`"${run}"`));
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
async function measureBurst(client, target, startedFirst = 0) {
  await burst(client, target, WARMUP_RUNS);
  if (startedFirst > 0) await waitForRunning(target, startedFirst);
  const histogram = monitorEventLoopDelay({ resolution: 1 });
  histogram.enable();
  const { answers, seconds } = await burst(client, target, RUNS);
  histogram.disable();
  const latencies = answers.map((answer) => answer.latency).sort((left, right) => left - right);
  return {
    seconds,
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
async function measureBareRoute(client, runsDirectory) {
  const { default: Fastify } = await import("fastify");
  const app = Fastify();
  let next = 0;
  app.post("/agents/:id/runs", async (_request, reply) => reply.code(202).send({ run: `bare-${next++}` }));
  await app.listen({ host: "127.0.0.1", port: 0 });
  const url = `http://127.0.0.1:${app.server.address().port}`;
  const figures = await measureBurst(client, { url, token: "", runsDirectory });
  await app.close();
  return figures;
}

async function measureDaemon(client, root, modelPort, concurrency) {
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
  const daemons = new Map(CONCURRENCIES.map((concurrency) => [concurrency, []]));
  for (let round = 0; round < ROUNDS; round++) {
    const baseline = await measureBareRoute(client, path.join(root, "data", "runs"));
    bare.push(baseline);
    for (const concurrency of CONCURRENCIES) {
      const figures = await measureDaemon(client, root, port, concurrency);
      daemons.get(concurrency).push({ ...figures, ratio: figures.slowest / baseline.slowest });
    }
  }
  await client.terminate();
  rmSync(root, { recursive: true, force: true });

  const milliseconds = (values) => {
    const { median, min, max } = spread(values);
    return `${median.toFixed(1)} ms (${min.toFixed(1)}–${max.toFixed(1)})`;
  };
  const line = (name, rounds) =>
    console.log(
      `${name.padEnd(24)} ${rounds.map((figures) => figures.accepted).join("/")} of ${RUNS} answered 202: ` +
        `p50 ${milliseconds(rounds.map((figures) => figures.p50))}, ` +
        `slowest ${milliseconds(rounds.map((figures) => figures.slowest))}, ` +
        `longest loop block ${milliseconds(rounds.map((figures) => figures.longestBlock))}`,
    );
  console.log(
    `${RUNS} concurrent POST /agents/:id/runs (after ${WARMUP_RUNS} to warm up), ${ROUNDS} rounds: median (min–max); ` +
      `${cpus().length} cores, load average ${loadavg()[0].toFixed(1)}`,
  );
  line("bare fastify route", bare);
  let failed = false;
  for (const [concurrency, rounds] of daemons) {
    line(`agentd, concurrency ${concurrency}`, rounds);
    const ratio = spread(rounds.map((figures) => figures.ratio));
    const block = spread(rounds.map((figures) => figures.longestBlock));
    const notOnDisk = rounds.reduce((sum, figures) => sum + figures.notOnDisk, 0);
    console.log(
      `  ratio slowest 202 agentd/bare: ${ratio.median.toFixed(2)}x (${ratio.min.toFixed(2)}–${ratio.max.toFixed(2)}; ` +
        `target <= ${TARGET_RATIO}x: ${ratio.median <= TARGET_RATIO ? "met" : "MISSED"}); ` +
        `longest block ${block.median.toFixed(1)} ms (target < ${TARGET_BLOCK_MILLISECONDS} ms: ` +
        `${block.median < TARGET_BLOCK_MILLISECONDS ? "met" : "MISSED"}); ` +
        `202 answers whose run was not on disk yet: ${notOnDisk}`,
    );
    if (rounds.some((figures) => figures.accepted !== RUNS) || notOnDisk > 0) failed = true;
  }
  if (failed) process.exitCode = 1;
}
