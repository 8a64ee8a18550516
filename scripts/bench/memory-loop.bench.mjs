// Memory benchmark: what `memory:` adds to the think-act-observe loop, per round.
//   loop:  runs of ROUNDS rounds through the run core's worker wrapper (withMemoryContext) and
//          LlmWorker, alternating memory off (`memory: none`) and on (`memory: write`, a memory
//          filled to its 8,000-character bound in the system prompt of every request, the three
//          memory tools offered, the memory read from its file and masked at each run's start),
//          against the same local streaming server that answers at once, in one process.
//          Target: the ratio of medians per round within 1.05.
//   write: what one memory_add costs through MemoryService on files (read, edit, secret check,
//          compare-and-set, fsync'd replace), for scale; a round calls it only when the model does.
// Run with `node --expose-gc` (npm run bench does); imports the built code from dist/.
import { Buffer } from "node:buffer";
import { once } from "node:events";
import { mkdtempSync, rmSync } from "node:fs";
import { createServer } from "node:http";
import os from "node:os";
import path from "node:path";
import { performance } from "node:perf_hooks";
import { ConfigSchema, LimitsSchema } from "../../dist/config/config-schema.js";
import { AgentFrontmatterSchema } from "../../dist/definitions/agent-schema.js";
import { EventBus } from "../../dist/events/event-bus.js";
import { ModelClient } from "../../dist/llm/model-client.js";
import { FileMemoryStore } from "../../dist/memory/file-memory-store.js";
import { addEntry } from "../../dist/memory/memory-edits.js";
import { withMemoryContext } from "../../dist/memory/memory-context-worker.js";
import { MemoryService } from "../../dist/memory/memory-service.js";
import { MemoryTools } from "../../dist/memory/memory-tools.js";
import { RunControl } from "../../dist/run-vocabulary/run-control.js";
import { SecretRedactor } from "../../dist/secrets/secret-redactor.js";
import { LlmWorker } from "../../dist/workers/llm/llm-worker.js";
import { QUICK } from "./bench-daemon.mjs";

const ROUNDS = QUICK ? 5 : 50;
const REPETITIONS = QUICK ? 1 : 21;
const WRITES = QUICK ? 5 : 200;
const RATIO_TARGET = 1.05;
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

const dataDirectory = mkdtempSync(path.join(os.tmpdir(), "agentd-memory-bench-"));
const redactor = new SecretRedactor();
redactor.add("github_token", "ghp_bench0123456789abcdefghijklmnopqrstu");
redactor.add("deploy_key", "dk-bench-7f3a91c2e4b8d6f0");
const memories = new MemoryService({
  store: new FileMemoryStore(dataDirectory),
  redact: redactor.redactText,
});
const memoryTools = new MemoryTools(memories);
const server = await startServer();
try {
  await fillMemory();
  await loop();
  await writes();
} finally {
  server.close();
  server.closeAllConnections();
  rmSync(dataDirectory, { recursive: true, force: true });
}

/** The memory at its bound: entries of ~100 characters up to 8,000. */
async function fillMemory() {
  const key = { kind: "agent", agent: "bench" };
  let content = "";
  for (let index = 0; content.length < 7_900; index += 1) {
    content = `${content}${content === "" ? "" : "\n\n"}Entry ${index}: the nightly job on host build-${index % 7} needs the cache warmed before 02:00.`;
  }
  const current = await memories.read(key);
  await memories.set(key, `${content}\n`, current.version, {
    agents: [],
    run: null,
    events: new EventBus(),
    by: "operator",
  });
}

async function loop() {
  const off = [];
  const on = [];
  const offCpu = [];
  const onCpu = [];
  const measure = async (mode, times, cpuTimes) => {
    const cpuBefore = process.cpuUsage();
    times.push(await timed(() => agentdRun(ROUNDS, mode)));
    const cpu = process.cpuUsage(cpuBefore);
    cpuTimes.push((cpu.user + cpu.system) / 1000);
  };
  await agentdRun(10, "none");
  await agentdRun(10, "write");
  const load = os.loadavg()[0];
  for (let repetition = 0; repetition < REPETITIONS; repetition += 1) {
    // Pairs in turn, the order swapped every other pair, so a drift of the machine's load hits both.
    if (repetition % 2 === 0) {
      await measure("none", off, offCpu);
      await measure("write", on, onCpu);
    } else {
      await measure("write", on, onCpu);
      await measure("none", off, offCpu);
    }
  }
  const pairRatios = on.map((time, index) => time / off[index]);
  const ratio = median(pairRatios);
  console.log(
    `loop: ${ROUNDS} rounds per run, ${REPETITIONS} pairs, load average ${load.toFixed(2)} → ${os.loadavg()[0].toFixed(2)}`,
  );
  row("memory off", off);
  row("memory on (8,000 chars)", on);
  row("CPU, memory off", offCpu);
  row("CPU, memory on", onCpu);
  const cpuRatios = [...onCpu.map((time, index) => time / offCpu[index])].sort((left, right) => left - right);
  console.log(
    `  CPU per round (this process: loop and server), on/off: median of paired ratios ${median(cpuRatios).toFixed(3)} (quartiles ${quantile(cpuRatios, 0.25).toFixed(3)}–${quantile(cpuRatios, 0.75).toFixed(3)}), ratio of medians ${(median(onCpu) / median(offCpu)).toFixed(3)}`,
  );
  const sortedRatios = [...pairRatios].sort((left, right) => left - right);
  const verdict = ratio <= RATIO_TARGET ? "ok" : "OVER TARGET";
  console.log(
    `  wall time per round, on/off: median of paired ratios ${ratio.toFixed(3)} (quartiles ${quantile(sortedRatios, 0.25).toFixed(3)}–${quantile(sortedRatios, 0.75).toFixed(3)}), ratio of medians ${(median(on) / median(off)).toFixed(3)}, of best runs ${(Math.min(...on) / Math.min(...off)).toFixed(3)} (target ≤ ${RATIO_TARGET}) ${verdict}`,
  );
}

function quantile(sorted, fraction) {
  return sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * fraction))];
}

async function writes() {
  const key = { kind: "agent", agent: "writer" };
  const writer = { agents: ["writer"], run: "r_bench", events: new EventBus(), by: "agent" };
  const times = [];
  for (let index = 0; index < WRITES; index += 1) {
    const text = `note ${index}: ${"x".repeat(60)}`;
    times.push(
      await timed(() =>
        memories.edit(
          key,
          { change: { operation: "add", text }, edit: (content) => addEntry(content, text), maxChars: 1e6 },
          writer,
        ),
      ),
    );
  }
  const sorted = [...times].sort((left, right) => left - right);
  console.log(
    `\nwrite: ${WRITES} memory_add through MemoryService on files: median ${median(times).toFixed(2)} ms, p90 ${sorted[Math.floor(sorted.length * 0.9)].toFixed(2)} ms (each fsync'd)`,
  );
}

function row(label, times) {
  const middle = median(times);
  const best = Math.min(...times);
  const spread = ((Math.max(...times) - best) / middle) * 100;
  console.log(
    `  ${label.padEnd(24)} median ${middle.toFixed(1)} ms (${((middle / ROUNDS) * 1000).toFixed(0)} µs/round), best ${best.toFixed(1)} ms, spread ${spread.toFixed(0)}% of the median`,
  );
}

/** ROUNDS rounds through withMemoryContext and LlmWorker, with `memory: <mode>`. */
async function agentdRun(rounds, mode) {
  const llm = ConfigSchema.parse({ llm: { context: { max_tokens: 1_000_000 } } }).llm;
  const model = new ModelClient({
    baseUrl: server.url,
    apiKey: "bench",
    timeouts: { firstChunkMilliseconds: 30_000, idleMilliseconds: 30_000, callMilliseconds: 60_000 },
    maxAttempts: 1,
    backoff: { baseDelayMilliseconds: 10, maxDelayMilliseconds: 100 },
    circuitBreaker: { failureThreshold: 100, cooldownMilliseconds: 1_000 },
    prices: {},
  });
  const memorySpecs =
    mode === "write"
      ? await Promise.all(
          ["memory_add", "memory_replace", "memory_remove"].map((name) => memoryTools.find(name)),
        )
      : [];
  const tools = {
    specs: async () => [
      {
        name: TOOL.function.name,
        description: TOOL.function.description,
        parameters: TOOL.function.parameters,
      },
      ...memorySpecs.map((tool) => ({
        name: tool.name,
        description: tool.description,
        parameters: tool.parameters,
      })),
    ],
    execute: async (call) => ({ ok: true, output: noop(JSON.parse(call.argumentsJson)) }),
  };
  const workerFor = withMemoryContext(() => new LlmWorker({ model, tools, llm }), {
    memories,
    runsBefore: async () => [],
    redact: redactor.redactText,
  });
  const definition = benchDefinition(rounds, mode);
  server.plan(rounds);
  const outcome = await workerFor(definition).run({
    runId: "r_bench",
    definition,
    task: `Call noop ${rounds} times.`,
    control: new RunControl(),
    events: new EventBus(),
    setStatus: () => undefined,
  });
  if (outcome.status !== "completed")
    throw new Error(`the agentd run ended ${outcome.status}: ${outcome.error?.message}`);
  return outcome;
}

function noop(input) {
  return `noop done for round ${input.round}`;
}

function benchDefinition(rounds, mode) {
  const frontmatter = AgentFrontmatterSchema.parse({ description: "benchmark agent", memory: mode });
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

function median(values) {
  const sorted = [...values].sort((left, right) => left - right);
  return sorted[Math.floor(sorted.length / 2)];
}
