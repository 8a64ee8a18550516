// Traces benchmark: what OpenTelemetry traces add to the think-act-observe loop per round. The same
// 200-round run through agentd's LlmWorker (the model calls a trivial in-process tool every round)
// with traces off, and on and exporting over OTLP/HTTP protobuf to a local collector (content off,
// then on), alternating in one process against the same local streaming server. Target: traces on
// and exporting within 5 % of off (ratio of medians, or of best runs on a loaded machine).
// Run with `node --expose-gc` (npm run bench does); imports the built code from dist/.
import { Buffer } from "node:buffer";
import { once } from "node:events";
import { createServer } from "node:http";
import { loadavg } from "node:os";
import { performance } from "node:perf_hooks";
import { ConfigSchema, LimitsSchema } from "../../dist/config/config-schema.js";
import { AgentFrontmatterSchema } from "../../dist/definitions/agent-schema.js";
import { EventBus } from "../../dist/events/event-bus.js";
import { ModelClient } from "../../dist/llm/model-client.js";
import { RunControl } from "../../dist/run-vocabulary/run-control.js";
import { LlmWorker } from "../../dist/workers/llm/llm-worker.js";
import { openCoreTraces, tracedTools, tracedWorkerFor } from "../../dist/telemetry/core-traces.js";
import { tracedModel } from "../../dist/telemetry/traced-model.js";
import { QUICK } from "./bench-daemon.mjs";

const ROUNDS = QUICK ? 10 : 200;
const REPETITIONS = QUICK ? 1 : 11;
const RATIO_TARGET = 1.05;
const TOOL = {
  type: "function",
  function: {
    name: "noop",
    description: "Does nothing and says so",
    parameters: { type: "object", properties: { round: { type: "number" } }, required: ["round"] },
  },
};

const server = await startServer();
const collector = await startCollector();
try {
  const modes = ["off", "exporting", "exporting with content"];
  const times = Object.fromEntries(modes.map((mode) => [mode, []]));
  // CPU time of this process (the loop, the model server and the collector all run in it): on a
  // loaded machine it moves far less than wall time, which waits for the cores too.
  const cpu = Object.fromEntries(modes.map((mode) => [mode, []]));
  for (const mode of modes) await run(20, mode);
  const loadBefore = loadavg()[0];
  for (let repetition = 0; repetition < REPETITIONS; repetition += 1) {
    for (const mode of modes) {
      const before = process.cpuUsage();
      times[mode].push(await timed(() => run(ROUNDS, mode)));
      const used = process.cpuUsage(before);
      cpu[mode].push((used.user + used.system) / 1000);
    }
  }
  console.log(
    `traces: ${ROUNDS} rounds, ${REPETITIONS} alternating runs of each, load average ${loadBefore.toFixed(1)} → ${loadavg()[0].toFixed(1)}`,
  );
  for (const mode of modes) row(`traces ${mode}`, times[mode]);
  for (const mode of modes) row(`CPU time, traces ${mode}`, cpu[mode]);
  console.log(`  collector received ${collector.requests()} export requests, ${collector.bytes()} bytes`);
  for (const mode of modes.slice(1)) {
    const cpuRatio = median(cpu[mode]) / median(cpu.off);
    console.log(`  ${mode} / off: CPU time, ratio of medians ${cpuRatio.toFixed(3)}`);
    const ratio = median(times[mode]) / median(times.off);
    const best = Math.min(...times[mode]) / Math.min(...times.off);
    // Content copies the whole history into every chat span: informative, no target.
    const verdict = mode.includes("content")
      ? "(no target)"
      : Math.min(ratio, best) <= RATIO_TARGET
        ? "ok"
        : "OVER TARGET";
    console.log(
      `  ${mode} / off: ratio of medians ${ratio.toFixed(3)}, of best runs ${best.toFixed(3)} ${mode.includes("content") ? "" : `(target ≤ ${RATIO_TARGET}) `}${verdict}`,
    );
  }
} finally {
  server.close();
  server.closeAllConnections();
  collector.close();
}

/** One run of `rounds` rounds; traced runs get a core's traces of their own, flushed at the end. */
async function run(rounds, mode) {
  const traces =
    mode === "off"
      ? undefined
      : openCoreTraces({
          settings: {
            traces: { endpoint: collector.url, protocol: "http/protobuf", content: mode.includes("content") },
          },
          redact: (text) => text,
          environment: {},
        });
  const llm = ConfigSchema.parse({ llm: { context: { max_tokens: 1_000_000 } } }).llm;
  const client = new ModelClient({
    baseUrl: server.url,
    apiKey: "bench",
    timeouts: { firstChunkMilliseconds: 30_000, idleMilliseconds: 30_000, callMilliseconds: 60_000 },
    maxAttempts: 1,
    backoff: { baseDelayMilliseconds: 10, maxDelayMilliseconds: 100 },
    circuitBreaker: { failureThreshold: 100, cooldownMilliseconds: 1_000 },
    prices: {},
  });
  const plainTools = {
    specs: async () => [
      {
        name: TOOL.function.name,
        description: TOOL.function.description,
        parameters: TOOL.function.parameters,
      },
    ],
    execute: async (call) => ({ ok: true, output: noop(JSON.parse(call.argumentsJson)) }),
  };
  const runs = traces?.runs;
  const model = runs ? tracedModel(client, { endpoint: server.url, content: runs.content }) : client;
  const tools = runs ? tracedTools(plainTools, runs) : plainTools;
  const workerFor = () => new LlmWorker({ model, tools, llm });
  const worker = (runs ? tracedWorkerFor(workerFor, runs) : workerFor)();
  const events = new EventBus();
  if (runs) events.subscribe(runs.onEvent);
  const runId = `r_bench${mode.length}`;
  runs?.stampNewRun({
    id: runId,
    agent: "bench",
    task: "bench",
    status: "queued",
    trigger: { kind: "api" },
    definition_hash: "bench",
    created_at: new Date().toISOString(),
    usage: { prompt_tokens: 0, completion_tokens: 0, total_tokens: 0 },
    cost_usd: 0,
  });
  server.plan(rounds);
  const outcome = await worker.run({
    runId,
    definition: benchDefinition(rounds),
    task: `Call noop ${rounds} times.`,
    control: new RunControl(),
    events,
    setStatus: () => undefined,
  });
  if (outcome.status !== "completed")
    throw new Error(`the run ended ${outcome.status}: ${outcome.error?.message}`);
  events.publish({ agent: "bench", run: runId, type: "status", data: { status: "completed" } });
  // The export is part of the cost: the run's spans are flushed before the next run starts.
  await traces?.shutdown();
}

function row(label, times) {
  const middle = median(times);
  const best = Math.min(...times);
  const spread = `${Math.min(...times).toFixed(0)}–${Math.max(...times).toFixed(0)} ms`;
  console.log(
    `  ${label.padEnd(32)} median ${middle.toFixed(1)} ms (${((middle / ROUNDS) * 1000).toFixed(0)} µs/round), best ${best.toFixed(1)} ms, spread ${spread}`,
  );
}

function noop(input) {
  return `noop done for round ${input.round}`;
}

function benchDefinition(rounds) {
  const frontmatter = AgentFrontmatterSchema.parse({ description: "benchmark agent" });
  return {
    id: "bench",
    file: "/bench/bench.md",
    hash: "bench",
    name: "bench",
    description: frontmatter.description,
    frontmatter,
    instructions: "You are a benchmark agent.",
    presetChain: [],
    systemPrompt: "You are a benchmark agent.",
    limits: { ...LimitsSchema.parse({}), max_iterations: rounds + 10, max_tokens: 1e12, max_cost_usd: 1e6 },
    permissions: { allow: [], ask: [], deny: [] },
    approvals: { timeout: 600_000, on_timeout: "deny" },
    workdir: process.cwd(),
    model: "bench",
    warnings: [],
  };
}

/** A local OTLP/HTTP collector that takes every export and answers 200, counting what it got. */
async function startCollector() {
  let requests = 0;
  let bytes = 0;
  const http = createServer(async (request, response) => {
    for await (const part of request) bytes += part.length;
    requests += 1;
    response.writeHead(200, { "content-type": "application/x-protobuf" });
    response.end();
  });
  http.listen(0, "127.0.0.1");
  await once(http, "listening");
  return {
    url: `http://127.0.0.1:${http.address().port}`,
    requests: () => requests,
    bytes: () => bytes,
    close: () => {
      http.closeAllConnections();
      http.close();
    },
  };
}

/**
 * A minimal OpenAI-compatible streaming server answering at once: a `noop` tool call (arguments
 * split across two chunks) for each planned round, then a final text. A request without tools is
 * a compaction summary and gets a short summary.
 */
async function startServer() {
  let remaining = 0;
  let callNumber = 0;
  const http = createServer(async (request, response) => {
    const parts = [];
    for await (const part of request) parts.push(part);
    const body = JSON.parse(Buffer.concat(parts).toString("utf8"));
    response.writeHead(200, { "content-type": "text/event-stream" });
    const base = { id: "bench", object: "chat.completion.chunk", created: 0, model: body.model };
    const send = (choices, extra = {}) =>
      response.write(`data: ${JSON.stringify({ ...base, choices, ...extra })}\n\n`);
    const usage = { prompt_tokens: 100, completion_tokens: 10, total_tokens: 110 };
    if (!body.tools) {
      send([
        {
          index: 0,
          delta: { role: "assistant", content: "Summary: noop was called many times, all fine." },
          finish_reason: null,
        },
      ]);
      send([{ index: 0, delta: {}, finish_reason: "stop" }]);
    } else if (remaining > 0) {
      remaining -= 1;
      callNumber += 1;
      const id = `call_${callNumber}`;
      const argumentsText = JSON.stringify({ round: callNumber });
      const half = Math.floor(argumentsText.length / 2);
      send([
        {
          index: 0,
          delta: {
            role: "assistant",
            content: null,
            tool_calls: [{ index: 0, id, type: "function", function: { name: "noop", arguments: "" } }],
          },
          finish_reason: null,
        },
      ]);
      send([
        {
          index: 0,
          delta: { tool_calls: [{ index: 0, function: { arguments: argumentsText.slice(0, half) } }] },
          finish_reason: null,
        },
      ]);
      send([
        {
          index: 0,
          delta: { tool_calls: [{ index: 0, function: { arguments: argumentsText.slice(half) } }] },
          finish_reason: null,
        },
      ]);
      send([{ index: 0, delta: {}, finish_reason: "tool_calls" }]);
    } else {
      send([{ index: 0, delta: { role: "assistant", content: "All rounds done." }, finish_reason: null }]);
      send([{ index: 0, delta: {}, finish_reason: "stop" }]);
    }
    if (body.stream_options?.include_usage) send([], { usage });
    response.end("data: [DONE]\n\n");
  });
  http.listen(0, "127.0.0.1");
  await once(http, "listening");
  return {
    url: `http://127.0.0.1:${http.address().port}/v1`,
    plan: (rounds) => {
      remaining = rounds;
    },
    close: () => http.close(),
    closeAllConnections: () => http.closeAllConnections(),
  };
}

async function timed(action) {
  const started = performance.now();
  await action();
  return performance.now() - started;
}

function median(values) {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
}
