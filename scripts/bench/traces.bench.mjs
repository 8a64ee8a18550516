// Traces benchmark: what OpenTelemetry traces add to the think-act-observe loop per round. The same
// 200-round run through agentd's LlmWorker (the model calls a trivial in-process tool every round)
// with traces off, and on and exporting over OTLP/HTTP protobuf (content off; then content on, for
// information). Each mode runs in processes of its own for their whole life, as a daemon is traced
// or not for its whole life: PROCESSES processes per mode, taking turns run by run, each warmed up
// for 4,000 rounds (a fresh process's CPU per round falls for its first thousands of rounds: three
// warm-up runs, as before, measured processes of different ages, not modes), then measured in
// interleaved pairs against the untraced processes (paired-measurement.mjs; or, with
// TRACES_BENCH_TOGETHER=1, each pair's two runs side by side, so both meet the same load). Each
// run's CPU time (user + system) is that of its own process since its previous run ended.
// TRACES_MODES=aa measures the bench's own noise floor: untraced processes against untraced ones.
// Nothing forces a garbage collection in the measured processes: a forced gc() before each run made
// V8 drop and recompile the optimized code whose objects had all died, a cost a daemon does not pay.
// The model server and the OTLP sink run in a process of their own
// (scripted-model-process.mjs). Every traced run exports through the vault's redactor with secrets
// loaded, as the daemon does, and is flushed before it returns, so each run is charged its own
// export; a process's runs share one provider and exporter (one connection to the collector), as a
// daemon has one for its life.
// Target: CPU per round, traces exporting / off, within 1.05 (issue 32).
// Run with `node --expose-gc` (npm run bench does); imports the built code from dist/ (or from
// TRACES_BENCH_DIST, a dist/ folder to measure another build with this script).
// Roles: the same file runs as one mode's process (`--role=mode --mode=<mode>`).
import { fork } from "node:child_process";
import { once } from "node:events";
import { readFileSync } from "node:fs";
import { cpus } from "node:os";
import path from "node:path";
import { URL, fileURLToPath, pathToFileURL } from "node:url";
import { QUICK } from "./bench-daemon.mjs";
import { queuedBenchRecord } from "./bench-run-record.mjs";
import {
  cpuMicroseconds,
  formatLoad,
  formatRatio,
  formatSide,
  measurePairs,
  measurePairsTogether,
} from "./paired-measurement.mjs";
import { startScriptedModel } from "./scripted-model-process.mjs";

const ROUNDS = Number(process.env.TRACES_BENCH_ROUNDS ?? (QUICK ? 10 : 200));
const REPETITIONS = Number(process.env.TRACES_BENCH_REPETITIONS ?? (QUICK ? 1 : 21));
/** Each pair's two runs side by side (TRACES_BENCH_TOGETHER=1) rather than one after the other. */
const TOGETHER = process.env.TRACES_BENCH_TOGETHER === "1";
/** Processes per side, taking turns (TRACES_BENCH_PROCESSES). */
const PROCESSES = Number(process.env.TRACES_BENCH_PROCESSES ?? (QUICK ? 1 : 2));
/**
 * Unmeasured runs of each process before its first measured one (TRACES_BENCH_WARMUP): a fresh
 * process's CPU per round falls for its first 2,000–3,000 rounds (13 ms, then 4 ms after 1,000
 * rounds, then 1.5–2 ms, beside an older process at 1.5–2 ms all along), so 4,000 rounds.
 */
const WARMUP = Number(process.env.TRACES_BENCH_WARMUP ?? (QUICK ? 1 : Math.ceil(4_000 / ROUNDS)));
const RATIO_TARGET = 1.05;
const TOOL = {
  type: "function",
  function: {
    name: "noop",
    description: "Does nothing and says so",
    parameters: { type: "object", properties: { round: { type: "number" } }, required: ["round"] },
  },
};
/** The built modules a mode's process loads (from dist/ or TRACES_BENCH_DIST), by export name. */
const built = {};
const role = option("role");

if (role === "mode") await serveMode();
else await main();

async function main() {
  // The model and the OTLP sink in a process of their own, each mode in its own: no process is
  // charged for another's work.
  const server = await startScriptedModel();
  // TRACES_MODES=exporting leaves the content mode out (it has no target); TRACES_MODES=aa measures
  // the bench's own noise floor: untraced processes against other untraced processes;
  // `non-recording` and `discarding` tell tracing's parts apart (see serveMode), with no target.
  const modes = (process.env.TRACES_MODES ?? "exporting,exporting with content").split(",");
  const sides = new Map();
  let floor;
  try {
    // Every side's processes started before any is measured, then each warmed up alike.
    floor = await startSide("off", server);
    for (const mode of modes) sides.set(mode, await startSide(mode === "aa" ? "off" : mode, server));
    // Side by side: the warm-ups are long (a process's CPU per round falls for thousands of rounds).
    await Promise.all([floor, ...sides.values()].map((side) => side.warmUp()));
    const perRound = { units: ROUNDS, unit: "round", width: 32 };
    for (const mode of modes) {
      const subject = sides.get(mode);
      const label = mode === "aa" ? "off, other processes (A/A)" : `traces ${mode}`;
      const result = await (TOGETHER ? measurePairsTogether : measurePairs)({
        pairs: REPETITIONS,
        warmup: 0,
        floor: floor.run,
        subject: subject.run,
      });
      console.log(
        `${label}: ${ROUNDS} rounds, ${REPETITIONS} pairs, ${PROCESSES} processes per side taking turns, ${formatLoad(result, cpus().length)}`,
      );
      console.log(formatSide("traces off", result.floor, perRound));
      console.log(formatSide(label, result.subject, perRound));
      // Content copies the whole history into every chat span: informative, no target. A/A: ~1.00.
      const target = mode === "exporting" ? { target: RATIO_TARGET } : {};
      const ratioLabel = mode === "aa" ? "off A/A / off" : `traces ${mode} / off`;
      console.log(formatRatio(`  CPU ratio ${ratioLabel}`, result.cpuRatios, target));
      console.log(formatRatio(`  wall ratio ${ratioLabel}`, result.wallRatios));
    }
    const { sinkRequests, sinkBytes } = await server.stats();
    console.log(`  the OTLP sink received ${sinkRequests} export requests, ${sinkBytes} bytes`);
  } finally {
    for (const side of sides.values()) await side.close();
    await floor?.close();
    await server.close();
  }
}

/**
 * One side of the comparison: PROCESSES processes of one mode, taking turns run by run, so no
 * one process's luck (where its heap and its optimized code landed) is the side's figure.
 */
async function startSide(mode, server) {
  const processes = [];
  for (let index = 0; index < PROCESSES; index += 1) processes.push(await startMode(mode, server));
  let turn = 0;
  return {
    warmUp: () =>
      Promise.all(
        processes.map(async (child) => {
          for (let index = 0; index < WARMUP; index += 1) await child.run(ROUNDS);
        }),
      ),
    run: () => processes[turn++ % processes.length].run(ROUNDS),
    close: async () => {
      for (const child of processes) await child.close();
    },
  };
}

/**
 * Starts one mode's process. Resolves with `run(rounds)`, which runs one run there and resolves
 * with `{ cpuMicroseconds }` (that process's CPU time for the run), and `close()`.
 */
async function startMode(mode, server) {
  const options = [`--mode=${mode}`, `--model-url=${server.modelUrl}`, `--sink-url=${server.sinkUrl}`];
  const child = fork(fileURLToPath(import.meta.url), ["--role=mode", ...options], {
    // Not this process's --expose-gc: nothing in a mode's process may force a collection.
    // TRACES_BENCH_CPU_PROF_DIR: each mode's process writes a CPU profile there (node --cpu-prof).
    execArgv: process.env.TRACES_BENCH_CPU_PROF_DIR
      ? [
          "--cpu-prof",
          `--cpu-prof-dir=${process.env.TRACES_BENCH_CPU_PROF_DIR}`,
          `--cpu-prof-name=${mode}-${process.hrtime.bigint()}.cpuprofile`,
        ]
      : [],
    stdio: ["ignore", "inherit", "inherit", "ipc"],
  });
  const exited = once(child, "exit");
  await once(child, "message");
  return {
    run: async (rounds) => {
      child.send({ rounds });
      const [answer] = await Promise.race([
        once(child, "message"),
        exited.then(([code]) => {
          throw new Error(`the ${mode} process exited with ${code}`);
        }),
      ]);
      if (answer.error) throw new Error(`a ${mode} run failed: ${answer.error}`);
      return answer;
    },
    close: async () => {
      if (child.connected) child.disconnect();
      if (child.exitCode === null) await exited;
    },
  };
}

/**
 * Role `mode`: one mode's process for its whole life. Its traces (for a traced mode) are opened once,
 * as a daemon opens them; each `{ rounds }` message runs one run and answers with the CPU time
 * (user + system) this process spent since the previous run ended, the run's export included.
 */
async function serveMode() {
  const mode = option("mode");
  const modelUrl = option("model-url");
  const sinkUrl = option("sink-url");
  const dist = process.env.TRACES_BENCH_DIST
    ? pathToFileURL(`${path.resolve(process.env.TRACES_BENCH_DIST)}/`)
    : new URL("../../dist/", import.meta.url);
  const modules = await Promise.all(
    [
      "config/config-schema.js",
      "definitions/agent-schema.js",
      "events/event-bus.js",
      "llm/model-client.js",
      "run-vocabulary/run-control.js",
      "secrets/secret-redactor.js",
      "workers/llm/llm-worker.js",
      "telemetry/core-traces.js",
      "telemetry/traced-model.js",
    ].map((file) => import(new URL(file, dist).href)),
  );
  Object.assign(built, ...modules);
  const { SecretRedactor, openCoreTraces } = built;
  // The daemon's exporter masks with the vault's redactor: a few secrets loaded, as in a real vault.
  const redactor = new SecretRedactor();
  redactor.add("openai", "sk-bench-0123456789abcdefghijklmnopqrstuv");
  redactor.add("github", "ghp_benchBENCHbench0123456789abcdefABCDEF");
  redactor.add("smtp", "correct horse battery staple");
  // Two modes to tell the parts of tracing's cost apart (no target): `non-recording` (the SDK's
  // always_off sampler: agentd's wrappers and the SDK's start of a span that records nothing) and
  // `discarding` (spans recorded and masked, each batch dropped after the masking exporter).
  if (mode === "non-recording") process.env.OTEL_TRACES_SAMPLER = "always_off";
  const discard = { export: (spans, done) => done({ code: 0 }), shutdown: () => Promise.resolve() };
  const traces =
    mode === "off"
      ? undefined
      : await openCoreTraces({
          settings: {
            traces: { endpoint: sinkUrl, protocol: "http/protobuf", content: mode.includes("content") },
          },
          redact: redactor.redactText,
          secretsKnown: () => redactor.size,
          environment: {},
          ...(mode === "discarding" ? { exporter: discard } : {}),
        });
  // As `agentd start` does once it is up (src/cli/stop-pretenuring.ts), on both sides alike;
  // TRACES_BENCH_PRETENURING=1 keeps V8's default, to compare.
  if (process.env.TRACES_BENCH_PRETENURING !== "1") {
    const { stopPretenuring } = await import(
      new URL("../../dist/cli/stop-pretenuring.js", import.meta.url).href
    );
    stopPretenuring();
  }
  let runNumber = 0;
  // A run is charged from the end of the one before: what the process did while it waited (the
  // collections and compilations a run leaves behind, done on V8's threads or when idle) belongs to
  // the runs, not to nobody.
  let lastRunEnded = cpuMicroseconds();
  process.on("disconnect", async () => {
    await traces?.shutdown();
    process.exit(0);
  });
  process.on("message", async ({ rounds }) => {
    runNumber += 1;
    try {
      const started = cpuMicroseconds();
      const mainStarted = mainThreadMicroseconds();
      await run({ modelUrl, rounds, traces, runId: `r_bench_${mode.length}_${runNumber}` });
      const ended = cpuMicroseconds();
      process.send({
        cpuMicroseconds: ended - lastRunEnded,
        runMicroseconds: ended - started,
        mainMicroseconds: mainThreadMicroseconds() - mainStarted,
      });
      lastRunEnded = ended;
    } catch (error) {
      process.send({ error: String(error?.stack ?? error) });
    }
  });
  process.send({ ready: true });
}

/** One run of `rounds` rounds; a traced run's spans are exported before it returns. */
async function run({ modelUrl, rounds, traces, runId }) {
  const {
    ConfigSchema,
    EventBus,
    LlmWorker,
    ModelClient,
    RunControl,
    tracedModel,
    tracedTools,
    tracedWorkerFor,
  } = built;
  const llm = ConfigSchema.parse({ llm: { context: { max_tokens: 1_000_000 } } }).llm;
  const client = new ModelClient({
    baseUrl: modelUrl,
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
  const model = runs ? tracedModel(client, { endpoint: modelUrl, content: runs.content }) : client;
  const tools = runs ? tracedTools(plainTools, runs) : plainTools;
  const workerFor = () => new LlmWorker({ model, tools, llm });
  const worker = (runs ? tracedWorkerFor(workerFor, runs) : workerFor)();
  const events = new EventBus();
  if (runs) events.subscribe(runs.onEvent);
  runs?.stampNewRun(queuedBenchRecord(runId));
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

/** This process's main thread's time on a CPU so far, in microseconds (schedstat, in ns). */
function mainThreadMicroseconds() {
  return Number(readFileSync(`/proc/self/task/${process.pid}/schedstat`, "utf8").split(" ")[0]) / 1_000;
}

/** The value of `--<name>=<value>` on this process's command line. */
function option(name) {
  return process.argv.find((argument) => argument.startsWith(`--${name}=`))?.slice(name.length + 3);
}

function noop(input) {
  return `noop done for round ${input.round}`;
}

function benchDefinition(rounds) {
  const { AgentFrontmatterSchema, LimitsSchema } = built;
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
