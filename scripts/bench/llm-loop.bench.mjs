// LLM loop benchmark: what agentd's think-act-observe loop costs per round, and whether its memory
// stays flat over a long run. The model is a local OpenAI-compatible streaming server in a child
// process that answers at once, so its CPU falls on neither side.
//   daemon:   a ROUNDS-round run through the daemon (the real composition root, in a child process:
//             run records and events on disk, the model calls the builtin `read_file` tool every
//             round, permission checks, secret masking) vs. a bare `openai` SDK loop doing the same
//             rounds with the same tool round trip (reading the same file); CPU of the daemon's
//             process vs. CPU of the bare loop's, in interleaved pairs. Target ratio ≤ 1.05. Then,
//             for information, the bare loop given the daemon's own fetch for its model calls.
//   loop:     the same in one process: LlmWorker with a trivial in-process tool and events on an
//             in-memory bus vs. the bare SDK loop; what the loop itself adds, wall and CPU.
//   memory:   a 1,000-round run with compaction on; heap used after GC at rounds 100 and 1,000
//             should be flat.
// Run with `node --expose-gc` (npm run bench does); imports the built code from dist/.
// Roles: the same file runs as the model server (`--role=model`) and the daemon (`--role=daemon`).
import { Buffer } from "node:buffer";
import { fork } from "node:child_process";
import { once } from "node:events";
import { mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:http";
import { cpus } from "node:os";
import path from "node:path";
import { URL, fileURLToPath } from "node:url";
import OpenAI from "openai";
import { ConfigSchema, LimitsSchema } from "../../dist/config/config-schema.js";
import { AgentFrontmatterSchema } from "../../dist/definitions/agent-schema.js";
import { EventBus } from "../../dist/events/event-bus.js";
import { ModelClient } from "../../dist/llm/model-client.js";
import { modelFetch } from "../../dist/llm/model-fetch.js";
import { RunControl } from "../../dist/run-vocabulary/run-control.js";
import { LlmWorker } from "../../dist/workers/llm/llm-worker.js";
import { QUICK, createBenchProject, startBenchDaemon } from "./bench-daemon.mjs";
import { cpuMicroseconds, formatLoad, formatRatio, formatSide, measurePairs } from "./paired-measurement.mjs";

const ROUNDS = QUICK ? 10 : 200;
const PAIRS = QUICK ? 2 : 15;
const MEMORY_ROUNDS = QUICK ? 20 : 1_000;
const RATIO_TARGET = 1.05;
const HEAP_SAMPLE_ROUNDS = QUICK ? [10, MEMORY_ROUNDS] : [100, 250, 500, 750, MEMORY_ROUNDS];
const NOOP_TOOL = {
  type: "function",
  function: {
    name: "noop",
    description: "Does nothing and says so",
    parameters: { type: "object", properties: { round: { type: "number" } }, required: ["round"] },
  },
};
/** What the daemon's builtin read_file tells the model, as the bare loop declares it. */
const READ_FILE_TOOL = {
  type: "function",
  function: {
    name: "read_file",
    description: "Reads a text file of the working directory",
    parameters: { type: "object", properties: { path: { type: "string" } }, required: ["path"] },
  },
};

/** The file the daemon's `read_file` and the bare loop's tool both read every round. */
const NOTE = Array.from({ length: 20 }, (_, line) => `line ${line + 1}: the nightly build passed.`).join(
  "\n",
);
/** `--cpu-prof-dir=<dir>`: the daemon's process writes a CPU profile there (node --cpu-prof). */
const PROFILE_DIRECTORY = process.argv
  .find((argument) => argument.startsWith("--cpu-prof-dir="))
  ?.slice("--cpu-prof-dir=".length);
/** `--only=daemon`: the daemon mode alone (for profiling it, or comparing builds quickly). */
const ONLY = process.argv.find((argument) => argument.startsWith("--only="))?.slice("--only=".length);
const role = process.argv.find((argument) => argument.startsWith("--role="))?.slice("--role=".length);

if (role === "model") await serveModel();
else if (role === "daemon") await serveDaemon();
else await main();

async function main() {
  if (!globalThis.gc) {
    console.error("run with node --expose-gc (npm run bench does)");
    process.exit(2);
  }
  const model = fork(fileURLToPath(import.meta.url), ["--role=model"], { execArgv: [] });
  const [{ url }] = await once(model, "message");
  const daemon = fork(fileURLToPath(import.meta.url), ["--role=daemon"], {
    execArgv: [
      ...(PROFILE_DIRECTORY ? ["--cpu-prof", `--cpu-prof-dir=${PROFILE_DIRECTORY}`] : []),
      ...(process.env.LOOP_TRACE_GC ? ["--trace-gc"] : []),
    ],
  });
  try {
    daemon.send({ modelUrl: url });
    const [ready] = await once(daemon, "message");
    if (ONLY === undefined || ONLY === "daemon") await daemonLoop(url, daemon, ready.notePath);
    if (ONLY === undefined || ONLY === "loop") await inProcessLoop(url);
    if (ONLY === undefined || ONLY === "memory") await memory(url);
  } finally {
    daemon.disconnect();
    model.disconnect();
    await once(daemon, "exit");
  }
}

/** The daemon (child process, events and records on disk, builtin read_file) against the bare SDK. */
async function daemonLoop(url, daemon, notePath) {
  const readNote = ({ offset }) =>
    readFileSync(notePath, "utf8")
      .split("\n")
      .slice(offset - 1)
      .join("\n");
  const runInDaemon = async () => {
    daemon.send({ rounds: ROUNDS });
    const [answer] = await once(daemon, "message");
    if (answer.status !== "completed" || answer.modelCalls !== ROUNDS + 1)
      throw new Error(`the daemon's run ended ${answer.status} after ${answer.modelCalls} model calls`);
    return answer;
  };
  const result = await measurePairs({
    pairs: PAIRS,
    warmup: 2,
    floor: () => plainLoop(url, ROUNDS, "read_file", readNote),
    subject: runInDaemon,
    // The daemon pays its garbage collections inside its runs; so does the bare loop, here.
    forceGc: false,
  });
  console.log(
    `daemon: ${ROUNDS}-round runs, ${PAIRS} interleaved pairs; the daemon in its own process (run records and events on disk, builtin read_file every round) vs. the bare openai SDK loop reading the same file; CPU of each side's process`,
  );
  console.log(formatSide("bare openai SDK loop", result.floor, { units: ROUNDS, unit: "round" }));
  console.log(formatSide("agentd daemon", result.subject, { units: ROUNDS, unit: "round" }));
  console.log(formatRatio("  CPU ratio daemon / bare SDK", result.cpuRatios, { target: RATIO_TARGET }));
  console.log(formatRatio("  wall ratio daemon / bare SDK", result.wallRatios));
  console.log(`  ${formatLoad(result, cpus().length)}`);

  // For information: the same bare loop given the daemon's own transport for its model calls
  // (src/llm/model-fetch.ts, cheaper than the SDK's default fetch), so what is left of the ratio
  // is the daemon's own work, not the transport it chose.
  const sameFetch = modelFetch(await import("undici"));
  const sameTransport = await measurePairs({
    pairs: PAIRS,
    warmup: 2,
    floor: () => plainLoop(url, ROUNDS, "read_file", readNote, sameFetch),
    subject: runInDaemon,
    forceGc: false,
  });
  console.log(
    formatSide("bare SDK loop, daemon's fetch", sameTransport.floor, {
      units: ROUNDS,
      unit: "round",
      width: 30,
    }),
  );
  console.log(
    formatSide("agentd daemon", sameTransport.subject, { units: ROUNDS, unit: "round", width: 30 }),
  );
  console.log(
    formatRatio(
      "  CPU ratio daemon / bare SDK with the daemon's fetch (information)",
      sameTransport.cpuRatios,
    ),
  );
  console.log(`  ${formatLoad(sameTransport, cpus().length)}`);
}

/** LlmWorker in this process (trivial tool, in-memory bus) against the bare SDK, same process. */
async function inProcessLoop(url) {
  const result = await measurePairs({
    pairs: PAIRS,
    warmup: 2,
    floor: () => plainLoop(url, ROUNDS, "noop", (input) => noop(input)),
    subject: () => agentdRun(url, ROUNDS),
    // A forced collection before each run costs each side a recompilation of what it runs (some
    // 450 µs a round, measured), which pulls the ratio toward 1: neither side gets one.
    forceGc: false,
  });
  console.log(
    `\nloop: ${ROUNDS}-round runs, ${PAIRS} interleaved pairs, LlmWorker with an in-process noop tool vs. the bare openai SDK loop, both in this process`,
  );
  console.log(formatSide("bare openai SDK loop", result.floor, { units: ROUNDS, unit: "round" }));
  console.log(formatSide("agentd LlmWorker", result.subject, { units: ROUNDS, unit: "round" }));
  console.log(formatRatio("  CPU ratio LlmWorker / bare SDK", result.cpuRatios));
  console.log(formatRatio("  wall ratio LlmWorker / bare SDK", result.wallRatios));
  console.log(`  ${formatLoad(result, cpus().length)}`);
}

async function memory(url) {
  const heapAt = new Map();
  const compactions = [];
  const outcome = await agentdRun(url, MEMORY_ROUNDS, {
    context: { max_tokens: 3_000, keep_recent: 6 },
    onRound: (round) => {
      if (!HEAP_SAMPLE_ROUNDS.includes(round)) return;
      globalThis.gc();
      heapAt.set(round, process.memoryUsage().heapUsed);
    },
    onEvent: (event) => event.type === "compaction" && compactions.push(event.data.method),
  });
  const at100 = (heapAt.get(HEAP_SAMPLE_ROUNDS[0]) ?? 0) / 1_048_576;
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

/**
 * The baseline: the same rounds with the bare SDK, history kept the same way, no guardrails;
 * `tool` answers each call from its parsed arguments.
 */
async function plainLoop(url, rounds, toolName, tool, fetch = undefined) {
  const client = new OpenAI({
    baseURL: url,
    apiKey: "bench",
    maxRetries: 0,
    logLevel: "off",
    ...(fetch === undefined ? {} : { fetch }),
  });
  const spec = toolName === "noop" ? NOOP_TOOL : READ_FILE_TOOL;
  const messages = [
    { role: "system", content: "You are a benchmark agent." },
    { role: "user", content: `Call ${toolName} ${rounds} times.` },
  ];
  for (;;) {
    const stream = await client.chat.completions.create({
      model: "bench",
      messages,
      tools: [spec],
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
      messages.push({ role: "tool", tool_call_id: call.id, content: tool(JSON.parse(call.arguments)) });
  }
}

/** The same rounds through agentd's LlmWorker with a trivial in-process ToolExecutor. */
async function agentdRun(url, rounds, options = {}) {
  const llm = ConfigSchema.parse({ llm: { context: options.context ?? { max_tokens: 1_000_000 } } }).llm;
  const model = new ModelClient({
    baseUrl: url,
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
        name: NOOP_TOOL.function.name,
        description: NOOP_TOOL.function.description,
        parameters: NOOP_TOOL.function.parameters,
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
 * Role `daemon`: the daemon on a temporary project whose agent `bench` may call read_file on
 * `note.txt` in its workdir; each `{ rounds }` message starts a run, waits until the daemon is
 * idle and answers with the run's status and the CPU time this process spent meanwhile.
 */
async function serveDaemon() {
  const [{ modelUrl }] = await once(process, "message");
  const root = createBenchProject("agentd-bench-loop-", {});
  const workdir = path.join(root, "work");
  mkdirSync(workdir);
  const notePath = path.join(workdir, "note.txt");
  writeFileSync(notePath, `${NOTE}\n`);
  const agent = [
    "---",
    "description: benchmark agent",
    "tools: [read_file]",
    `workdir: ${JSON.stringify(workdir)}`,
    "permissions:",
    "  allow: [read_file]",
    "limits:",
    "  max_iterations: 100000",
    "  max_cost_usd: 1000000",
    "---",
    "You are a benchmark agent.",
    "",
  ];
  writeFileSync(path.join(root, "agents", "bench.md"), agent.join("\n"));
  const daemon = await startBenchDaemon({
    root,
    modelPort: Number(new URL(modelUrl).port),
    settings: {
      llm: { base_url: modelUrl, api_key: "bench", model: "bench", context: { max_tokens: 1_000_000 } },
    },
  });
  const stop = async () => {
    await daemon.shutdown();
    rmSync(root, { recursive: true, force: true });
    process.exit(0);
  };
  process.on("disconnect", stop);
  process.on("SIGTERM", stop);
  process.on("message", async ({ rounds }) => {
    const before = cpuMicroseconds();
    const record = await daemon.runs.start("bench", `Call read_file ${rounds} times.`);
    await daemon.runs.waitUntilIdle(600_000);
    const cpu = cpuMicroseconds() - before;
    const finished = await daemon.runs.find(record.id);
    // Every model call was answered with usage of 110 tokens: how many the run made.
    const modelCalls = (finished?.usage.total_tokens ?? 0) / 110;
    process.send({ cpuMicroseconds: cpu, status: finished?.status, modelCalls });
  });
  process.send({ notePath });
}

/**
 * Role `model`: a minimal OpenAI-compatible streaming server answering at once. The user's first
 * message says `Call <tool> <n> times.`; each answer is a call of that tool (arguments split across
 * two chunks, its id `call_<k>_of_<n>`) until the last tool result in the history is the n-th, then
 * a final text. A request without tools is a compaction summary and gets a short summary. It keeps
 * no state between requests, so both sides and every run can share it.
 */
async function serveModel() {
  const http = createServer(async (request, response) => {
    const parts = [];
    for await (const part of request) parts.push(part);
    const body = JSON.parse(Buffer.concat(parts).toString("utf8"));
    response.writeHead(200, { "content-type": "text/event-stream" });
    const base = { id: "bench", object: "chat.completion.chunk", created: 0, model: body.model };
    const send = (choices, extra = {}) =>
      response.write(`data: ${JSON.stringify({ ...base, choices, ...extra })}\n\n`);
    const usage = { prompt_tokens: 100, completion_tokens: 10, total_tokens: 110 };
    const last = body.messages.at(-1);
    const previous = /^call_(\d+)_of_(\d+)$/.exec(last.role === "tool" ? last.tool_call_id : "");
    const task = /Call (\w+) (\d+) times/.exec(
      body.messages.find((message) => message.role === "user")?.content ?? "",
    );
    const toolName = body.tools?.[0]?.function?.name ?? task?.[1];
    const total = previous ? Number(previous[2]) : Number(task?.[2] ?? 0);
    const round = previous ? Number(previous[1]) + 1 : 1;
    if (!body.tools) {
      send([
        {
          index: 0,
          delta: { role: "assistant", content: "Summary: the tool was called many times, all fine." },
          finish_reason: null,
        },
      ]);
      send([{ index: 0, delta: {}, finish_reason: "stop" }]);
    } else if (round <= total) {
      const id = `call_${round}_of_${total}`;
      // Arguments differ from round to round, as a real model's do (the loop detector stops repeats).
      const argumentsText = JSON.stringify(
        toolName === "noop" ? { round } : { path: "note.txt", offset: ((round - 1) % 20) + 1 },
      );
      const half = Math.floor(argumentsText.length / 2);
      send([
        {
          index: 0,
          delta: {
            role: "assistant",
            content: null,
            tool_calls: [{ index: 0, id, type: "function", function: { name: toolName, arguments: "" } }],
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
  process.on("disconnect", () => process.exit(0));
  process.send({ url: `http://127.0.0.1:${http.address().port}/v1` });
}

function megabytes(bytes = 0) {
  return (bytes / 1_048_576).toFixed(1);
}
