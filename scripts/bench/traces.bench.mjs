// Traces benchmark: what OpenTelemetry traces add to the think-act-observe loop per round. The same
// 200-round run through agentd's LlmWorker (the model calls a trivial in-process tool every round)
// with traces off, and on and exporting over OTLP/HTTP protobuf to a local collector (content off,
// then on), interleaved in one process against the same local streaming server: each repetition
// runs every mode once, in an order that reverses from one repetition to the next, so a change of
// the machine's load hits every mode alike. Every traced run exports through the vault's redactor
// with secrets loaded, as the daemon does. Target: traces on and exporting within 5 % of off: the
// median of the per-repetition ratios of CPU time (the process's, which a loaded machine moves
// less than wall time), printed with its spread and the load average around it.
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
import { SecretRedactor } from "../../dist/secrets/secret-redactor.js";
import { LlmWorker } from "../../dist/workers/llm/llm-worker.js";
import { openCoreTraces, tracedTools, tracedWorkerFor } from "../../dist/telemetry/core-traces.js";
import { tracedModel } from "../../dist/telemetry/traced-model.js";
import { QUICK } from "./bench-daemon.mjs";

const ROUNDS = Number(process.env.TRACES_BENCH_ROUNDS ?? (QUICK ? 10 : 200));
const REPETITIONS = Number(process.env.TRACES_BENCH_REPETITIONS ?? (QUICK ? 1 : 15));
const RATIO_TARGET = 1.05;
const TOOL = {
  type: "function",
  function: {
    name: "noop",
    description: "Does nothing and says so",
    parameters: { type: "object", properties: { round: { type: "number" } }, required: ["round"] },
  },
};
// The daemon's exporter masks with the vault's redactor: a few secrets loaded, as in a real vault.
const redactor = new SecretRedactor();
redactor.add("openai", "sk-bench-0123456789abcdefghijklmnopqrstuv");
redactor.add("github", "ghp_benchBENCHbench0123456789abcdefABCDEF");
redactor.add("smtp", "correct horse battery staple");

const server = await startServer();
const collector = await startCollector();
try {
  const modes = ["off", "exporting", "exporting with content"];
  const times = Object.fromEntries(modes.map((mode) => [mode, []]));
  // CPU time of this process (the loop, the model server and the collector all run in it): on a
  // loaded machine it moves far less than wall time, which waits for the cores too.
  const cpu = Object.fromEntries(modes.map((mode) => [mode, []]));
  for (const mode of modes) await run(20, mode);
  const loads = [loadavg()[0]];
  for (let repetition = 0; repetition < REPETITIONS; repetition += 1) {
    const order = repetition % 2 === 0 ? modes : [...modes].reverse();
    for (const mode of order) {
      globalThis.gc?.();
      const before = process.cpuUsage();
      times[mode].push(await timed(() => run(ROUNDS, mode)));
      const used = process.cpuUsage(before);
      cpu[mode].push((used.user + used.system) / 1000);
    }
    loads.push(loadavg()[0]);
  }
  console.log(
    `traces: ${ROUNDS} rounds, ${REPETITIONS} interleaved repetitions of each mode (order reversed every other one), load average (1 min) ${Math.min(...loads).toFixed(1)}–${Math.max(...loads).toFixed(1)}`,
  );
  for (const mode of modes) row(`traces ${mode}`, times[mode]);
  for (const mode of modes) row(`CPU time, traces ${mode}`, cpu[mode]);
  console.log(`  collector received ${collector.requests()} export requests, ${collector.bytes()} bytes`);
  for (const mode of modes.slice(1)) {
    const cpuRatios = cpu[mode].map((value, index) => value / cpu.off[index]);
    const wallRatios = times[mode].map((value, index) => value / times.off[index]);
    // Content copies the whole history into every chat span: informative, no target.
    const target = mode.includes("content") ? "(no target)" : `(target ≤ ${RATIO_TARGET})`;
    const verdict = mode.includes("content")
      ? ""
      : median(cpuRatios) <= RATIO_TARGET
        ? " ok"
        : " OVER TARGET";
    console.log(`  ratio ${mode} / off, CPU time: ${describeRatios(cpuRatios)} ${target}${verdict}`);
    console.log(`  ratio ${mode} / off, wall time: ${describeRatios(wallRatios)}`);
  }
} finally {
  server.close();
  server.closeAllConnections();
  collector.close();
}

/** The median of per-repetition ratios, with its quartiles and extremes: the spread, honestly. */
function describeRatios(ratios) {
  const sorted = [...ratios].sort((a, b) => a - b);
  const at = (fraction) => sorted[Math.round(fraction * (sorted.length - 1))];
  return `median ${median(sorted).toFixed(3)} (quartiles ${at(0.25).toFixed(3)}–${at(0.75).toFixed(3)}, range ${sorted[0].toFixed(3)}–${sorted.at(-1).toFixed(3)}, ${sorted.length} pairs)`;
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
          redact: redactor.redactText,
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
  // Kept-alive sockets outlive a pause between runs on a loaded machine (the default is 5 s).
  http.keepAliveTimeout = 120_000;
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
  // Kept-alive sockets outlive a pause between runs on a loaded machine (the default is 5 s).
  http.keepAliveTimeout = 120_000;
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
