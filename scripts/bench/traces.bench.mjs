// Traces benchmark: what OpenTelemetry traces add to the think-act-observe loop per round. The same
// 200-round run through agentd's LlmWorker (the model calls a trivial in-process tool every round)
// with traces off, and on and exporting over OTLP/HTTP protobuf (content off; then content on, for
// information), in interleaved pairs (paired-measurement.mjs). The model server and the OTLP sink run
// in a process of their own (scripted-model-process.mjs), so the CPU time measured is the loop's and
// the exporter's, not the peers'. Every traced run exports through the vault's redactor with secrets
// loaded, as the daemon does, and is flushed before the next starts. A mode's runs share one
// provider and exporter (one connection to the collector), as a daemon has one for its life; each
// run is charged its own export (flushed before it returns). Target: CPU per round, traces
// exporting / off, within 1.05 (issue 32).
// Run with `node --expose-gc` (npm run bench does); imports the built code from dist/.
import { cpus } from "node:os";
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
import { formatLoad, formatRatio, formatSide, measurePairs } from "./paired-measurement.mjs";
import { startScriptedModel } from "./scripted-model-process.mjs";

const ROUNDS = Number(process.env.TRACES_BENCH_ROUNDS ?? (QUICK ? 10 : 200));
const REPETITIONS = Number(process.env.TRACES_BENCH_REPETITIONS ?? (QUICK ? 1 : 15));
const RATIO_TARGET = 1.05;
/** Each run's id is new, as in a daemon (one provider sees many runs). */
let runNumber = 0;
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

// The model and the OTLP sink in a process of their own: this process's CPU time is the loop's.
const server = await startScriptedModel();
try {
  const off = () => run(ROUNDS, "off");
  const perRound = { units: ROUNDS, unit: "round", width: 32 };
  // TRACES_MODES=exporting leaves the content mode out (it has no target).
  const modes = (process.env.TRACES_MODES ?? "exporting,exporting with content").split(",");
  for (const mode of modes) {
    const traces = await openTraces(mode);
    const result = await measurePairs({
      pairs: REPETITIONS,
      warmup: 2,
      floor: off,
      subject: () => run(ROUNDS, mode, traces),
    }).finally(() => traces.shutdown());
    console.log(
      `traces ${mode}: ${ROUNDS} rounds, ${REPETITIONS} pairs, ${formatLoad(result, cpus().length)}`,
    );
    console.log(formatSide("traces off", result.floor, perRound));
    console.log(formatSide(`traces ${mode}`, result.subject, perRound));
    // Content copies the whole history into every chat span: informative, no target.
    const target = mode.includes("content") ? {} : { target: RATIO_TARGET };
    console.log(formatRatio(`  CPU ratio traces ${mode} / off`, result.cpuRatios, target));
    console.log(formatRatio(`  wall ratio traces ${mode} / off`, result.wallRatios));
  }
  const { sinkRequests, sinkBytes } = await server.stats();
  console.log(`  the OTLP sink received ${sinkRequests} export requests, ${sinkBytes} bytes`);
} finally {
  await server.close();
}

/** A core's traces for a mode's runs, opened once as a daemon opens them. */
function openTraces(mode) {
  return openCoreTraces({
    settings: {
      traces: { endpoint: server.sinkUrl, protocol: "http/protobuf", content: mode.includes("content") },
    },
    redact: redactor.redactText,
    secretsKnown: () => redactor.size,
    environment: {},
  });
}

/** One run of `rounds` rounds; a traced run's spans are exported before it returns. */
async function run(rounds, mode, traces) {
  const llm = ConfigSchema.parse({ llm: { context: { max_tokens: 1_000_000 } } }).llm;
  const client = new ModelClient({
    baseUrl: server.modelUrl,
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
  const model = runs ? tracedModel(client, { endpoint: server.modelUrl, content: runs.content }) : client;
  const tools = runs ? tracedTools(plainTools, runs) : plainTools;
  const workerFor = () => new LlmWorker({ model, tools, llm });
  const worker = (runs ? tracedWorkerFor(workerFor, runs) : workerFor)();
  const events = new EventBus();
  if (runs) events.subscribe(runs.onEvent);
  const runId = `r_bench${mode.length}_${(runNumber += 1)}`;
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
  await traces?.flush();
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
