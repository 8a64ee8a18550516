// A burst of 200 concurrent POST /agents/:id/runs: the slowest 202 of the daemon against the slowest
// answer of a bare fastify route taking the same 200 POSTs in the same run, and the longest
// event-loop block in each process during its burst (perf_hooks.monitorEventLoopDelay).
// The daemon is built by the real composition root (dist/app/daemon.js) with its run records,
// event logs and API; the model keeps every run waiting until the end. The client and the model
// server run in a worker thread, so they do not
// share the measured event loop. Each 202's run record is checked on disk when the answer arrives:
// what the API reported must survive a kill -9.
// Targets: slowest 202 within 1.3x the bare route's slowest; longest block under 50 ms.
// Usage: node scripts/bench/run-burst.bench.mjs (after a build).
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:http";
import { tmpdir } from "node:os";
import path from "node:path";
import { monitorEventLoopDelay, performance } from "node:perf_hooks";
import { clearTimeout, setTimeout } from "node:timers";
import { URL } from "node:url";
import { Worker, isMainThread, parentPort } from "node:worker_threads";

const RUNS = 200;
const WARMUP_RUNS = 20;
/**
 * Runs in flight at once in the daemon (the rest stay queued): the default (4), where the burst is
 * mostly creating runs, and 100, where half of them also start their worker during the burst.
 */
const CONCURRENCIES = [4, 100];
/** The model answers each run after this long: runs are still waiting when the burst is over. */
const ANSWER_DELAY_MILLISECONDS = 60_000;
const TARGET_RATIO = 1.3;
const TARGET_BLOCK_MILLISECONDS = 50;

if (!isMainThread) {
  serveModelAndClient();
} else {
  await main();
}

/** Worker thread: a model server that answers late, and the client that sends the bursts. */
function serveModelAndClient() {
  const server = createServer((request, response) => {
    request.resume();
    request.on("end", () => {
      const timer = setTimeout(() => {
        response.writeHead(200, { "content-type": "application/json" });
        response.end(
          JSON.stringify({
            id: "chatcmpl-bench",
            object: "chat.completion",
            created: 0,
            model: "bench",
            choices: [{ index: 0, message: { role: "assistant", content: "done" }, finish_reason: "stop" }],
            usage: { prompt_tokens: 10, completion_tokens: 1, total_tokens: 11 },
          }),
        );
      }, ANSWER_DELAY_MILLISECONDS);
      response.on("close", () => clearTimeout(timer));
    });
  });
  server.listen(0, "127.0.0.1", () => parentPort.postMessage({ port: server.address().port }));
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
        // Reported means on disk: the run must be in its record file or in the index (where a run
        // is created) the moment the 202 arrives.
        const onDisk =
          existsSync(path.join(runsDirectory, `${body.run}.json`)) ||
          (existsSync(path.join(runsDirectory, "index.jsonl")) &&
            readFileSync(path.join(runsDirectory, "index.jsonl"), "utf8").includes(`"run":"${body.run}"`));
        return { status: response.status, latency: answered - sent, onDisk };
      }),
    );
    parentPort.postMessage({ answers, seconds: (performance.now() - started) / 1000 });
  });
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

/** A measured burst: the answers' latencies and the longest event-loop delay meanwhile. */
async function measureBurst(client, target) {
  await burst(client, target, WARMUP_RUNS);
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

/** The baseline: fastify's 202 route, nothing else, in this process. */
async function bareRoute(runsDirectory) {
  const { default: Fastify } = await import("fastify");
  const app = Fastify();
  let next = 0;
  app.post("/agents/:id/runs", async (_request, reply) => reply.code(202).send({ run: `bare-${next++}` }));
  await app.listen({ host: "127.0.0.1", port: 0 });
  return { app, target: { url: `http://127.0.0.1:${app.server.address().port}`, token: "", runsDirectory } };
}

async function main() {
  const { startDaemon } = await import("../../dist/app/daemon.js");
  const { ConfigSchema } = await import("../../dist/config/config-schema.js");
  const { createLogger } = await import("../../dist/logging/logger.js");

  const client = new Worker(new URL(import.meta.url));
  const { port } = await new Promise((resolve) => client.once("message", resolve));

  const root = mkdtempSync(path.join(tmpdir(), "agentd-bench-burst-"));
  for (const folder of ["agents", "presets"]) mkdirSync(path.join(root, folder));
  writeFileSync(
    path.join(root, "agents", "burst.md"),
    "---\ndescription: started in bursts\ntask: answer\n---\nAnswer the task.\n",
  );
  const dataDirectory = path.join(root, "data");

  const bare = await bareRoute(path.join(dataDirectory, "runs"));
  const baseline = await measureBurst(client, bare.target);
  await bare.app.close();

  const logger = createLogger({ level: "silent", pretty: false });
  const measured = [];
  for (const concurrency of CONCURRENCIES) {
    rmSync(dataDirectory, { recursive: true, force: true });
    const config = ConfigSchema.parse({
      agents_dir: path.join(root, "agents"),
      presets_dir: path.join(root, "presets"),
      data_dir: dataDirectory,
      server: { port: 0 },
      llm: { base_url: `http://127.0.0.1:${port}/v1`, api_key: "bench", model: "bench" },
      concurrency,
      limits: { max_concurrent_runs: RUNS + WARMUP_RUNS },
      log: { level: "silent" },
    });
    const daemon = await startDaemon({ config, version: "bench", overrides: { logger } });
    const figures = await measureBurst(client, {
      url: daemon.url,
      token: daemon.token,
      runsDirectory: path.join(dataDirectory, "runs"),
    });
    measured.push({ concurrency, ...figures });
    await daemon.shutdown();
  }
  await client.terminate();
  rmSync(root, { recursive: true, force: true });

  const format = (value) => `${value.toFixed(1)} ms`;
  const line = (name, figures) =>
    console.log(
      `${name.padEnd(24)} ${figures.accepted}/${RUNS} answered 202 in ${figures.seconds.toFixed(2)} s: ` +
        `p50 ${format(figures.p50)}, slowest ${format(figures.slowest)}, longest loop block ${format(figures.longestBlock)}`,
    );
  console.log(`${RUNS} concurrent POST /agents/:id/runs (after ${WARMUP_RUNS} to warm up)`);
  line("bare fastify route", baseline);
  let failed = false;
  for (const figures of measured) {
    line(`agentd, concurrency ${figures.concurrency}`, figures);
    const ratio = figures.slowest / baseline.slowest;
    const blockMet = figures.longestBlock < TARGET_BLOCK_MILLISECONDS;
    console.log(
      `  ratio slowest 202 agentd/bare: ${ratio.toFixed(2)}x (target <= ${TARGET_RATIO}x: ${ratio <= TARGET_RATIO ? "met" : "MISSED"}); ` +
        `longest block ${format(figures.longestBlock)} (target < ${TARGET_BLOCK_MILLISECONDS} ms: ${blockMet ? "met" : "MISSED"}); ` +
        `202 answers whose run was not on disk yet: ${figures.notOnDisk}`,
    );
    if (figures.accepted !== RUNS || figures.notOnDisk > 0) failed = true;
  }
  if (failed) process.exitCode = 1;
}
