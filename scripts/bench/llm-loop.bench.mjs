// LLM loop benchmark: what agentd's think-act-observe loop costs per round, and whether its memory
// stays flat over a long run.
//   overhead: a 200-round run through agentd (the model calls a trivial in-process tool every round)
//             vs. a plain loop doing the same rounds with the bare `openai` SDK, against the same
//             local streaming server that answers at once, in the same process. Target ratio ≤ 1.15.
//   memory:   a 1,000-round run with compaction on; heap used after GC at rounds 100 and 1,000
//             should be flat.
// Run with `node --expose-gc` (npm run bench does); imports the built code from dist/.
import { Buffer } from "node:buffer";
import { once } from "node:events";
import { createServer } from "node:http";
import { cpus, loadavg } from "node:os";
import { performance } from "node:perf_hooks";
import OpenAI from "openai";
import { ConfigSchema, LimitsSchema } from "../../dist/config/config-schema.js";
import { AgentFrontmatterSchema } from "../../dist/definitions/agent-schema.js";
import { EventBus } from "../../dist/events/event-bus.js";
import { ModelClient } from "../../dist/llm/model-client.js";
import { RunControl } from "../../dist/run-vocabulary/run-control.js";
import { LlmWorker } from "../../dist/workers/llm/llm-worker.js";
import { QUICK } from "./bench-daemon.mjs";

const ROUNDS = QUICK ? 10 : 200;
const REPETITIONS = QUICK ? 1 : 9;
const MEMORY_ROUNDS = QUICK ? 20 : 1_000;
const RATIO_TARGET = 1.15;
const HEAP_SAMPLE_ROUNDS = QUICK ? [10, MEMORY_ROUNDS] : [100, 250, 500, 750, MEMORY_ROUNDS];
const TOOL = {
  type: "function",
  function: {
    name: "noop",
    description: "Does nothing and says so",
    parameters: { type: "object", properties: { round: { type: "number" } }, required: ["round"] },
  },
};

if (!globalThis.gc) {
  console.error("run with node --expose-gc (npm run bench does)");
  process.exit(2);
}

const server = await startServer();
try {
  await overhead();
  await memory();
} finally {
  server.close();
  server.closeAllConnections();
}

async function overhead() {
  const plain = [];
  const agentd = [];
  await plainLoop(20);
  await agentdRun(20);
  for (let repetition = 0; repetition < REPETITIONS; repetition += 1) {
    plain.push(await timed(() => plainLoop(ROUNDS)));
    agentd.push(await timed(() => agentdRun(ROUNDS)));
  }
  const ratio = median(agentd) / median(plain);
  const bestRatio = Math.min(...agentd) / Math.min(...plain);
  console.log(
    `overhead: ${ROUNDS} rounds, ${REPETITIONS} alternating runs of each, same server and process; ${cpus().length} cores, load average ${loadavg()[0].toFixed(1)}`,
  );
  row("plain openai SDK loop", plain);
  row("agentd LlmWorker", agentd);
  const verdict = Math.min(ratio, bestRatio) <= RATIO_TARGET ? "ok" : "OVER TARGET";
  console.log(
    `  ratio of medians ${ratio.toFixed(3)}, of best runs ${bestRatio.toFixed(3)} (target ≤ ${RATIO_TARGET}) ${verdict}`,
  );
}

function row(label, times) {
  const middle = median(times);
  const best = Math.min(...times);
  console.log(
    `  ${label.padEnd(22)} median ${middle.toFixed(1)} ms (${((middle / ROUNDS) * 1000).toFixed(0)} µs/round), best ${best.toFixed(1)} ms`,
  );
}

async function memory() {
  const heapAt = new Map();
  const compactions = [];
  const outcome = await agentdRun(MEMORY_ROUNDS, {
    context: { max_tokens: 3_000, keep_recent: 6 },
    onRound: (round) => {
      if (!HEAP_SAMPLE_ROUNDS.includes(round)) return;
      globalThis.gc();
      heapAt.set(round, process.memoryUsage().heapUsed);
    },
    onEvent: (event) => event.type === "compaction" && compactions.push(event.data.method),
  });
  const at100 = (heapAt.get(100) ?? 0) / 1_048_576;
  const at1000 = (heapAt.get(MEMORY_ROUNDS) ?? 0) / 1_048_576;
  console.log(
    `\nmemory: ${MEMORY_ROUNDS}-round run with compaction (${outcome.status}, ${compactions.length} compactions, all ${[...new Set(compactions)].join("/")})`,
  );
  const samples = HEAP_SAMPLE_ROUNDS.map((round) => `${round}: ${megabytes(heapAt.get(round))} MB`);
  console.log(`  heap used after GC, by round: ${samples.join(", ")}`);
  console.log(
    `  growth ${(at1000 - at100).toFixed(2)} MB (${(((at1000 - at100) / at100) * 100).toFixed(1)}%)`,
  );
}

/** The baseline: the same rounds with the bare SDK, history kept the same way, no guardrails. */
async function plainLoop(rounds) {
  const client = new OpenAI({ baseURL: server.url, apiKey: "bench", maxRetries: 0, logLevel: "off" });
  const messages = [
    { role: "system", content: "You are a benchmark agent." },
    { role: "user", content: `Call noop ${rounds} times.` },
  ];
  server.plan(rounds);
  for (;;) {
    const stream = await client.chat.completions.create({
      model: "bench",
      messages,
      tools: [TOOL],
      stream: true,
      stream_options: { include_usage: true },
    });
    let text = "";
    const calls = [];
    for await (const chunk of stream) {
      const delta = chunk.choices[0]?.delta;
      if (delta?.content) text += delta.content;
      for (const part of delta?.tool_calls ?? []) {
        const call = (calls[part.index] ??= { id: "", name: "", arguments: "" });
        if (part.id) call.id = part.id;
        if (part.function?.name) call.name += part.function.name;
        if (part.function?.arguments) call.arguments += part.function.arguments;
      }
    }
    if (calls.length === 0) return text;
    messages.push({
      role: "assistant",
      content: text || null,
      tool_calls: calls.map((call) => ({
        id: call.id,
        type: "function",
        function: { name: call.name, arguments: call.arguments },
      })),
    });
    for (const call of calls)
      messages.push({ role: "tool", tool_call_id: call.id, content: noop(JSON.parse(call.arguments)) });
  }
}

/** The same rounds through agentd's LlmWorker with a trivial in-process ToolExecutor. */
async function agentdRun(rounds, options = {}) {
  const llm = ConfigSchema.parse({ llm: { context: options.context ?? { max_tokens: 1_000_000 } } }).llm;
  const model = new ModelClient({
    baseUrl: server.url,
    apiKey: "bench",
    timeouts: { firstChunkMilliseconds: 30_000, idleMilliseconds: 30_000, callMilliseconds: 60_000 },
    maxAttempts: 1,
    backoff: { baseDelayMilliseconds: 10, maxDelayMilliseconds: 100 },
    circuitBreaker: { failureThreshold: 100, cooldownMilliseconds: 1_000 },
    prices: {},
  });
  let round = 0;
  const tools = {
    specs: async () => [
      {
        name: TOOL.function.name,
        description: TOOL.function.description,
        parameters: TOOL.function.parameters,
      },
    ],
    execute: async (call) => {
      round += 1;
      options.onRound?.(round);
      return { ok: true, output: noop(JSON.parse(call.argumentsJson)) };
    },
  };
  const events = new EventBus();
  if (options.onEvent) events.subscribe(options.onEvent);
  const worker = new LlmWorker({ model, tools, llm });
  server.plan(rounds);
  const outcome = await worker.run({
    runId: "r_bench",
    definition: benchDefinition(rounds),
    task: `Call noop ${rounds} times.`,
    control: new RunControl(),
    events,
    setStatus: () => undefined,
  });
  if (outcome.status !== "completed")
    throw new Error(`the agentd run ended ${outcome.status}: ${outcome.error?.message}`);
  return outcome;
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

function megabytes(bytes = 0) {
  return (bytes / 1_048_576).toFixed(1);
}

function median(values) {
  const sorted = [...values].sort((left, right) => left - right);
  return sorted[Math.floor(sorted.length / 2)];
}
