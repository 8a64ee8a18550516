// Event-loop delay (p99, perf_hooks.monitorEventLoopDelay) in the daemon process while 200 runs
// stream their answers from an OpenAI-compatible server, against the same daemon idle, measured in
// the same run. The daemon is built by the real composition root (dist/app/daemon.js) with the
// real LLM worker, event store, run records on disk and HTTP API; the streaming server and the
// client POSTing the runs run in a worker thread so they do not share the daemon's event loop.
// Target: p99 under load < 20 ms.
// Usage: node scripts/bench/daemon-event-loop.bench.mjs (after a build).
import { rmSync } from "node:fs";
import { createServer } from "node:http";
import { cpus, loadavg } from "node:os";
import { monitorEventLoopDelay, performance } from "node:perf_hooks";
import { clearInterval, setInterval, setTimeout } from "node:timers";
import { URL } from "node:url";
import { Worker, isMainThread, parentPort, workerData } from "node:worker_threads";
import { QUICK, createBenchProject, startBenchDaemon } from "./bench-daemon.mjs";

const RUNS = QUICK ? 20 : 200;
/** Answers are 40 to 119 chunks long, so runs end spread over a couple of seconds as real ones do. */
const MIN_CHUNKS = QUICK ? 4 : 40;
const CHUNK_SPREAD = QUICK ? 8 : 80;
const CHUNK_INTERVAL_MILLISECONDS = 25;
const IDLE_MILLISECONDS = QUICK ? 300 : 3_000;
const TARGET_P99_MILLISECONDS = 20;

if (!isMainThread) {
  serveStreamingCompletions(workerData.interval, workerData.runs);
} else {
  await main();
}

/**
 * Worker thread: answers every chat completion with a slow SSE stream, then usage and [DONE], and
 * says when `runs` requests are streaming at once.
 */
function serveStreamingCompletions(interval, runs) {
  let requests = 0;
  const server = createServer((request, response) => {
    request.resume();
    request.on("end", () => {
      const chunks = MIN_CHUNKS + ((requests * 37) % CHUNK_SPREAD);
      requests += 1;
      if (requests === runs) parentPort.postMessage({ streaming: runs });
      response.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
      const chunk = (delta, finishReason = null, usage) =>
        `data: ${JSON.stringify({
          id: "chatcmpl-bench",
          object: "chat.completion.chunk",
          created: 0,
          model: "bench",
          choices: usage ? [] : [{ index: 0, delta, finish_reason: finishReason }],
          ...(usage ? { usage } : {}),
        })}\n\n`;
      let sent = 0;
      const timer = setInterval(() => {
        if (sent < chunks) {
          response.write(chunk({ content: `word${sent} ` }));
          sent += 1;
          return;
        }
        clearInterval(timer);
        response.write(chunk({}, "stop"));
        response.write(
          chunk({}, null, { prompt_tokens: 50, completion_tokens: chunks, total_tokens: 50 + chunks }),
        );
        response.end("data: [DONE]\n\n");
      }, interval);
      response.on("close", () => clearInterval(timer));
    });
  });
  server.listen(0, "127.0.0.1", () => parentPort.postMessage({ port: server.address().port }));
  // The client: POST /agents/:id/runs for every run at once, as 200 API users would.
  parentPort.on("message", async ({ apiUrl, token, runs }) => {
    const replies = await Promise.all(
      Array.from({ length: runs }, (_, index) =>
        globalThis
          .fetch(`${apiUrl}/agents/streamer/runs`, {
            method: "POST",
            headers: { "content-type": "application/json", authorization: `Bearer ${token}` },
            body: JSON.stringify({ task: `task ${index}` }),
          })
          .then((response) => response.json()),
      ),
    );
    parentPort.postMessage({ runIds: replies.map((reply) => reply.run) });
  });
}

/** p50, p99 and max of a delay histogram, in milliseconds. */
function summarize(histogram) {
  return {
    p50: histogram.percentile(50) / 1e6,
    p99: histogram.percentile(99) / 1e6,
    max: histogram.max / 1e6,
  };
}

async function main() {
  const llm = new Worker(new URL(import.meta.url), {
    workerData: { interval: CHUNK_INTERVAL_MILLISECONDS, runs: RUNS },
  });
  const { port } = await new Promise((resolve) => llm.once("message", resolve));

  const root = createBenchProject("agentd-bench-daemon-", {
    streamer: "---\ndescription: answers by streaming\ntask: stream an answer\n---\nAnswer the task.\n",
  });
  const daemon = await startBenchDaemon({
    root,
    modelPort: port,
    settings: { concurrency: RUNS, limits: { max_concurrent_runs: RUNS } },
  });

  const histogram = monitorEventLoopDelay({ resolution: 5 });
  histogram.enable();
  await new Promise((resolve) => setTimeout(resolve, IDLE_MILLISECONDS));
  histogram.disable();
  const idle = summarize(histogram);

  // The start burst: 200 POSTs at once, each run queued, recorded and handed to the worker.
  histogram.reset();
  histogram.enable();
  const started = performance.now();
  const allStreaming = new Promise((resolve) =>
    llm.on("message", (message) => message.streaming && resolve()),
  );
  const posted = new Promise((resolve) => llm.on("message", (message) => message.runIds && resolve(message)));
  llm.postMessage({ apiUrl: daemon.url, token: daemon.token, runs: RUNS });
  const { runIds } = await posted;
  await allStreaming;
  histogram.disable();
  const burst = summarize(histogram);
  const burstSeconds = (performance.now() - started) / 1000;

  // Streaming: every run receives its answer chunk by chunk until all have ended.
  histogram.reset();
  histogram.enable();
  const isFinished = (id) => ["completed", "failed", "stopped"].includes(daemon.runs.get(id)?.status);
  while (!runIds.every(isFinished)) await new Promise((resolve) => setTimeout(resolve, 50));
  histogram.disable();
  const load = summarize(histogram);
  const seconds = (performance.now() - started) / 1000;
  const completed = runIds.filter((id) => daemon.runs.get(id)?.status === "completed").length;
  const events = daemon.events.lastId("streamer");

  await daemon.shutdown();
  await llm.terminate();
  rmSync(root, { recursive: true, force: true });

  const format = (value) => `${value.toFixed(2)} ms`;
  const line = (name, figures) =>
    console.log(
      `${name.padEnd(22)} p50 ${format(figures.p50)}  p99 ${format(figures.p99)}  max ${format(figures.max)}`,
    );
  console.log(
    `runs: ${RUNS} (${completed} completed) in ${seconds.toFixed(2)} s, ${events} events; ${cpus().length} cores, load average ${loadavg()[0].toFixed(1)}`,
  );
  console.log(
    `each answer streams ${MIN_CHUNKS}-${MIN_CHUNKS + CHUNK_SPREAD - 1} chunks, one every ${CHUNK_INTERVAL_MILLISECONDS} ms`,
  );
  line("idle daemon", idle);
  line(`start burst (${burstSeconds.toFixed(2)} s)`, burst);
  line(`${RUNS} runs streaming`, load);
  console.log(`ratio p99 streaming/idle: ${(load.p99 / idle.p99).toFixed(2)}x`);
  console.log(`ratio p99 start burst/idle: ${(burst.p99 / idle.p99).toFixed(2)}x`);
  const verdict = load.p99 < TARGET_P99_MILLISECONDS ? "met" : "MISSED";
  console.log(`target p99 < ${TARGET_P99_MILLISECONDS} ms while streaming: ${verdict}`);
  if (completed !== RUNS) {
    console.error(`${RUNS - completed} run(s) did not complete`);
    process.exitCode = 1;
  }
}
