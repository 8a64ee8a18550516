// Memory of the event store with 1,000 agents each holding a full ring buffer (200 events of a
// realistic mix), filled live through the bus and then reopened from disk; also how long the
// reopen takes. Target: RSS < 300 MB, printed as the ratio RSS / target.
// Usage: node --expose-gc scripts/bench/api-memory.bench.mjs [--quick] (--quick: 50 agents)
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import path from "node:path";
import { performance } from "node:perf_hooks";
import { fileURLToPath } from "node:url";
import { EventBus } from "../../dist/events/event-bus.js";
import { EventStore } from "../../dist/events/event-store.js";
import { createLogger } from "../../dist/logging/logger.js";
import { QUICK } from "./bench-daemon.mjs";

const AGENTS = QUICK ? 50 : 1_000;
const TARGET_BYTES = 300 * 1024 * 1024;
const BUFFER_SIZE = 200;
const logger = createLogger({ level: "silent", pretty: false });
const megabytes = (bytes) => `${(bytes / 1024 / 1024).toFixed(1)} MB`;

function settle() {
  globalThis.gc?.();
  globalThis.gc?.();
  return process.memoryUsage();
}

/** A run's typical events: a thought, a tool call, its output, now and then a status or result. */
function draft(agent, index) {
  const run = `r_bench${agent.slice(6)}x${Math.floor(index / 20)}`;
  switch (index % 4) {
    case 0:
      return {
        agent,
        run,
        type: "thought",
        data: { text: `Looking at step ${index}: ${"reasoning ".repeat(12)}` },
      };
    case 1:
      return {
        agent,
        run,
        type: "action",
        data: { call_id: `call_${index}`, tool: "shell", arguments: { command: `git log -n ${index}` } },
      };
    case 2:
      return {
        agent,
        run,
        type: "observation",
        data: {
          call_id: `call_${index}`,
          tool: "shell",
          ok: true,
          output: "commit abc123 fix things\n".repeat(10),
          duration_ms: 12,
        },
      };
    default:
      return { agent, run, type: "status", data: { status: "running" } };
  }
}

/** Second phase, in a fresh process: what a restarted daemon pays to rebuild every ring buffer. */
async function reopen(directory) {
  const baseline = settle();
  const started = performance.now();
  const bus = new EventBus();
  const store = await EventStore.open({ dataDirectory: directory, bufferSize: BUFFER_SIZE, bus, logger });
  const seconds = (performance.now() - started) / 1_000;
  const memory = settle();
  const last = `agent-${AGENTS - 1}`;
  const held = store.poll(last, { after: 0, limit: 1_000 }).events.length;
  console.log(
    `reopened in ${seconds.toFixed(2)} s; ${last} holds ${held} events, next id ${bus.lastId(last) + 1}`,
  );
  console.log(
    `reopened: RSS ${megabytes(memory.rss)} (baseline ${megabytes(baseline.rss)}), heap ${megabytes(memory.heapUsed)}`,
  );
  console.log(`reopened: ratio RSS / 300 MB target: ${(memory.rss / TARGET_BYTES).toFixed(2)}`);
  store.close();
}

if (process.argv[2] === "--reopen") {
  await reopen(process.argv[3]);
  process.exit(0);
}

const dataDirectory = mkdtempSync(path.join(tmpdir(), "agentd-bench-memory-"));
const baseline = settle();
const bus = new EventBus();
const store = await EventStore.open({ dataDirectory, bufferSize: BUFFER_SIZE, bus, logger });
const agents = Array.from({ length: AGENTS }, (_, index) => `agent-${index}`);
const fillStarted = performance.now();
let bytes = 0;
for (let index = 0; index < BUFFER_SIZE; index++) {
  for (const agent of agents) bytes += JSON.stringify(bus.publish(draft(agent, index))).length;
}
const fillSeconds = (performance.now() - fillStarted) / 1_000;
const filled = settle();
const events = AGENTS * BUFFER_SIZE;
console.log(`${AGENTS} agents x ${BUFFER_SIZE} events = ${events} events, ${megabytes(bytes)} of JSON`);
console.log(
  `published and persisted in ${fillSeconds.toFixed(1)} s (${(events / fillSeconds).toFixed(0)} events/s)`,
);
console.log(
  `live:     RSS ${megabytes(filled.rss)} (baseline ${megabytes(baseline.rss)}), heap ${megabytes(filled.heapUsed)}`,
);
console.log(`live:     ratio RSS / 300 MB target: ${(filled.rss / TARGET_BYTES).toFixed(2)}`);
console.log(`load average ${loadavg()[0].toFixed(2)}`);
store.close();
spawnSync(
  process.execPath,
  ["--expose-gc", fileURLToPath(import.meta.url), "--reopen", dataDirectory, ...(QUICK ? ["--quick"] : [])],
  {
    stdio: "inherit",
  },
);
rmSync(dataDirectory, { recursive: true, force: true });
