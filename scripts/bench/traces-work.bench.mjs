// What tracing alone costs per round, out of the loop: the spans agentd makes for a 200-round run
// (its `invoke_agent` span, then per round a `chat` span through tracedModel and an `execute_tool`
// span with the call's own signal through RunTraces.executeTool), with a model and a tool that do
// nothing, exported at the end of each run as traces.bench.mjs does. The loop bench's ratio is
// ±5 % noise at the loads a shared machine sees; this one measures a few µs per round steadily, so
// it tells which part of tracing a change moved. Modes (TRACES_WORK_MODES): `exporting` (OTLP/HTTP
// protobuf to the scripted sink, through the masking exporter) and `discarding` (the masking
// exporter hands each batch to an exporter that drops it: no serialising, no request). The
// difference is the export. The SDK's OTEL_BSP_* variables apply, as in the daemon.
// No target: it prints each mode's CPU per round and the ratio exporting / discarding. `--quick`
// (CI) runs a few runs only, to show it still runs.
import { cpus, loadavg } from "node:os";
import { URL } from "node:url";
import { QUICK } from "./bench-daemon.mjs";
import { queuedBenchRecord } from "./bench-run-record.mjs";
import { cpuMicroseconds, quartiles } from "./paired-measurement.mjs";
import { startScriptedModel } from "./scripted-model-process.mjs";

const ROUNDS = 200;
const RUNS = Number(process.env.TRACES_WORK_RUNS ?? (QUICK ? 4 : 200));
const dist = new URL("../../dist/", import.meta.url);
const { openCoreTraces } = await import(new URL("telemetry/core-traces.js", dist).href);
const { tracedModel } = await import(new URL("telemetry/traced-model.js", dist).href);
const { SecretRedactor } = await import(new URL("secrets/secret-redactor.js", dist).href);

const server = await startScriptedModel();
try {
  const medians = new Map();
  for (const mode of (process.env.TRACES_WORK_MODES ?? "exporting,discarding").split(",")) {
    const perRound = await measure(mode);
    const { low, median, high } = quartiles(perRound.slice(RUNS / 2));
    medians.set(mode, median);
    const [load] = loadavg();
    console.log(
      `tracing work ${mode}: CPU ${median.toFixed(1)} µs/round (quartiles ${low.toFixed(1)}–${high.toFixed(1)}, last ${RUNS / 2} of ${RUNS} runs of ${ROUNDS} rounds), load average ${load.toFixed(2)}, ${cpus().length} cores`,
    );
  }
  if (medians.has("exporting") && medians.has("discarding"))
    console.log(
      `CPU ratio exporting / discarding ${(medians.get("exporting") / medians.get("discarding")).toFixed(2)} (the export's share of tracing's own work)`,
    );
} finally {
  await server.close();
}

/** CPU µs per round of each run, the run's export included. */
async function measure(mode) {
  const redactor = new SecretRedactor();
  redactor.add("openai", "sk-bench-0123456789abcdefghijklmnopqrstuv");
  redactor.add("smtp", "correct horse battery staple");
  const dropping = { export: (_spans, done) => done({ code: 0 }), shutdown: async () => undefined };
  const traces = await openCoreTraces({
    settings: { traces: { endpoint: server.sinkUrl, protocol: "http/protobuf", content: false } },
    redact: redactor.redactText,
    secretsKnown: () => redactor.size,
    environment: {},
    ...(mode === "discarding" ? { exporter: dropping } : {}),
  });
  const response = {
    model: "bench",
    finishReason: "tool_calls",
    usage: { prompt_tokens: 100, completion_tokens: 10, total_tokens: 110 },
    costUsd: 0,
    text: "",
    toolCalls: [],
  };
  const model = tracedModel(
    { complete: async () => response },
    { endpoint: server.modelUrl, content: false },
  );
  const perRound = [];
  for (let index = 0; index < RUNS; index += 1) {
    const started = cpuMicroseconds();
    await oneRun(traces, model, `r_work_${index}`);
    perRound.push((cpuMicroseconds() - started) / ROUNDS);
  }
  await traces.shutdown();
  return perRound;
}

async function oneRun(traces, model, runId) {
  const { runs } = traces;
  runs.stampNewRun(queuedBenchRecord(runId));
  const control = new AbortController();
  const context = {
    runId,
    definition: { id: "bench", description: "bench" },
    events: { publish: () => undefined },
    control: { signal: control.signal },
  };
  await runs.run(context, async () => {
    for (let round = 0; round < ROUNDS; round += 1) {
      await model.complete({ model: "bench", messages: [] }, { signal: control.signal });
      const call = { callId: `call_${round}`, tool: "noop", argumentsJson: `{"round":${round}}` };
      await runs.executeTool(call, runId, control.signal, async () => ({ ok: true, output: "noop done" }));
    }
  });
  runs.onEvent({ type: "status", run: runId, agent: "bench", data: { status: "completed" } });
  await traces.flush();
}
