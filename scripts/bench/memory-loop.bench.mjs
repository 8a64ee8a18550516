// Memory benchmark: what `memory:` adds to the think-act-observe loop, per round.
//   loop:   runs of ROUNDS rounds through the run core's worker wrapper (withMemoryContext) and
//           LlmWorker as the daemon runs them (events through the masking bus, the checkpoints
//           masked and written to data_dir), in interleaved pairs (paired-measurement.mjs): memory
//           off (`memory: none`) against memory on (`memory: write`: a memory filled to its
//           8,000-character bound in the system prompt of every request, the three memory tools
//           offered, the memory read from its file and masked at each run's start). The model
//           server runs in a process of its own (scripted-model-process.mjs), so the CPU time is the
//           loop's: a server in this process would be charged for parsing the longer prompt.
//           Target: CPU per round, memory on / off, within 1.05 (issue 31).
//   same prompt: memory on against memory off with the same section written into the
//           instructions. A longer prompt is sent (serialised, written to the socket) every round
//           whatever put it there; this pair shows what the memory feature itself adds on top
//           (docs/benchmarks.md says why both are printed).
//   write:  what one memory_add costs through MemoryService on files (read, edit, secret check,
//           compare-and-set, fsync'd replace), for scale; a round calls it only when the model does.
// Run with `node --expose-gc` (npm run bench does); imports the built code from dist/.
import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { performance } from "node:perf_hooks";
import { CheckpointStore } from "../../dist/checkpoints/checkpoint-store.js";
import { maskingCheckpoints } from "../../dist/checkpoints/masking-checkpoints.js";
import { ConfigSchema, LimitsSchema } from "../../dist/config/config-schema.js";
import { AgentFrontmatterSchema } from "../../dist/definitions/agent-schema.js";
import { EventBus } from "../../dist/events/event-bus.js";
import { ModelClient } from "../../dist/llm/model-client.js";
import { createLogger } from "../../dist/logging/logger.js";
import { FileMemoryStore } from "../../dist/memory/file-memory-store.js";
import { withMemoryContext } from "../../dist/memory/memory-context-worker.js";
import { addEntry } from "../../dist/memory/memory-edits.js";
import { memoryKeyOf } from "../../dist/memory/memory-key.js";
import { memorySection } from "../../dist/memory/memory-prompt-section.js";
import { MemoryService } from "../../dist/memory/memory-service.js";
import { MemoryTools } from "../../dist/memory/memory-tools.js";
import { memorySettingsOf } from "../../dist/memory/agent-memory.js";
import { RunControl } from "../../dist/run-vocabulary/run-control.js";
import { SecretRedactor } from "../../dist/secrets/secret-redactor.js";
import { LlmWorker } from "../../dist/workers/llm/llm-worker.js";
import { QUICK } from "./bench-daemon.mjs";
import { formatLoad, formatRatio, formatSide, measurePairs } from "./paired-measurement.mjs";
import { startScriptedModel } from "./scripted-model-process.mjs";

const ROUNDS = QUICK ? 5 : 50;
const PAIRS = QUICK ? 1 : 61;
const WRITES = QUICK ? 5 : 200;
const RATIO_TARGET = 1.05;
const NOOP = {
  name: "noop",
  description: "Does nothing and says so",
  parameters: { type: "object", properties: { round: { type: "number" } }, required: ["round"] },
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
const memorySpecs = await Promise.all(
  ["memory_add", "memory_replace", "memory_remove"].map((name) => memoryTools.find(name)),
);
// The daemon's checkpoints: masked with the vault's redactor, written to data_dir after each round.
const checkpoints = maskingCheckpoints(
  new CheckpointStore({ dataDirectory, logger: createLogger({ level: "silent", pretty: false }) }),
  redactor,
);
const server = await startScriptedModel();
let runNumber = 0;
try {
  await fillMemory();
  await loop();
  await writes();
} finally {
  await server.close();
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
  const off = () => agentdRun(ROUNDS, "none");
  const on = () => agentdRun(ROUNDS, "write");
  // The section memory on puts in the prompt, written into the instructions of a `memory: none` agent.
  const onDefinition = benchDefinition(ROUNDS, "write");
  const section = memorySection({
    memory: await memories.read(memoryKeyOf("bench", memorySettingsOf(onDefinition))),
    settings: memorySettingsOf(onDefinition),
    redact: redactor.redactText,
  });
  const inInstructions = () => agentdRun(ROUNDS, "none", section);
  // No forced collection before each run: it costs each side a recompilation of what it runs,
  // which pulls the ratio toward 1 (scripts/bench/llm-loop.bench.mjs measured it).
  const versusOff = await measurePairs({ pairs: PAIRS, warmup: 2, floor: off, subject: on, forceGc: false });
  const versusSame = await measurePairs({
    pairs: PAIRS,
    warmup: 1,
    floor: inInstructions,
    subject: on,
    forceGc: false,
  });
  const perRound = { units: ROUNDS, unit: "round", width: 36 };
  const cores = os.cpus().length;
  console.log(`loop: ${ROUNDS} rounds per run, ${PAIRS} pairs, ${formatLoad(versusOff, cores)}`);
  console.log(formatSide("memory off", versusOff.floor, perRound));
  console.log(formatSide("memory on (8,000 chars)", versusOff.subject, perRound));
  console.log(formatRatio("  CPU ratio memory on / off", versusOff.cpuRatios, { target: RATIO_TARGET }));
  console.log(formatRatio("  wall ratio memory on / off", versusOff.wallRatios));
  console.log(`same prompt: ${PAIRS} pairs, ${formatLoad(versusSame, cores)}`);
  console.log(formatSide("memory off, the section in instructions", versusSame.floor, perRound));
  console.log(formatSide("memory on", versusSame.subject, perRound));
  console.log(
    formatRatio("  CPU ratio memory on / same text in instructions", versusSame.cpuRatios, {
      target: RATIO_TARGET,
    }),
  );
  console.log(formatRatio("  wall ratio memory on / same text in instructions", versusSame.wallRatios));
}

async function writes() {
  const key = { kind: "agent", agent: "writer" };
  const writer = { agents: ["writer"], run: "r_bench", events: new EventBus(), by: "agent" };
  const times = [];
  for (let index = 0; index < WRITES; index += 1) {
    const text = `note ${index}: ${"x".repeat(60)}`;
    const started = performance.now();
    await memories.edit(
      key,
      { change: { operation: "add", text }, edit: (content) => addEntry(content, text), maxChars: 1e6 },
      writer,
    );
    times.push(performance.now() - started);
  }
  const sorted = [...times].sort((left, right) => left - right);
  const at = (fraction) => sorted[Math.floor(sorted.length * fraction)];
  console.log(
    `\nwrite: ${WRITES} memory_add through MemoryService on files: median ${at(0.5).toFixed(2)} ms, p90 ${at(0.9).toFixed(2)} ms (each fsync'd)`,
  );
}

/**
 * `rounds` rounds through withMemoryContext and LlmWorker, with `memory: <mode>`, and `extra`
 * appended to the instructions.
 */
async function agentdRun(rounds, mode, extra = "") {
  const llm = ConfigSchema.parse({ llm: { context: { max_tokens: 1_000_000 } } }).llm;
  const model = new ModelClient({
    baseUrl: server.modelUrl,
    apiKey: "bench",
    timeouts: { firstChunkMilliseconds: 30_000, idleMilliseconds: 30_000, callMilliseconds: 60_000 },
    maxAttempts: 1,
    backoff: { baseDelayMilliseconds: 10, maxDelayMilliseconds: 100 },
    circuitBreaker: { failureThreshold: 100, cooldownMilliseconds: 1_000 },
    prices: {},
  });
  const offered = mode === "write" ? memorySpecs : [];
  const tools = {
    specs: async () => [
      NOOP,
      ...offered.map((tool) => ({
        name: tool.name,
        description: tool.description,
        parameters: tool.parameters,
      })),
    ],
    execute: async (call) => ({
      ok: true,
      output: `noop done for round ${JSON.parse(call.argumentsJson).round}`,
    }),
  };
  const workerFor = withMemoryContext(() => new LlmWorker({ model, tools, llm }), {
    memories,
    runsBefore: async () => [],
    redact: redactor.redactText,
  });
  const definition = benchDefinition(rounds, mode, extra);
  runNumber += 1;
  const runId = `r_bench${runNumber}`;
  const outcome = await workerFor(definition).run({
    runId,
    definition,
    task: `Call noop ${rounds} times.`,
    control: new RunControl(),
    events: new EventBus({ redact: redactor.redactEvent }),
    checkpoints: checkpoints.forRun(runId),
    setStatus: () => undefined,
  });
  checkpoints.remove(runId);
  if (outcome.status !== "completed")
    throw new Error(`the agentd run ended ${outcome.status}: ${outcome.error?.message}`);
  return outcome;
}

function benchDefinition(rounds, mode, extra = "") {
  const frontmatter = AgentFrontmatterSchema.parse({ description: "benchmark agent", memory: mode });
  const instructions = extra === "" ? "You are a benchmark agent." : `You are a benchmark agent.\n\n${extra}`;
  return {
    id: "bench",
    file: "/bench/bench.md",
    hash: "bench",
    name: "bench",
    description: frontmatter.description,
    frontmatter,
    instructions,
    presetChain: [],
    systemPrompt: instructions,
    limits: { ...LimitsSchema.parse({}), max_iterations: rounds + 10, max_tokens: 1e12, max_cost_usd: 1e6 },
    permissions: { allow: [], ask: [], deny: [] },
    approvals: { timeout: 600_000, on_timeout: "deny" },
    workdir: process.cwd(),
    model: "bench",
    warnings: [],
  };
}
