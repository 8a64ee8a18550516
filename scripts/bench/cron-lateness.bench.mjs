// How late scheduled runs start: 20 agents on a every-second cron in the daemon (dist/app/daemon.js,
// the real scheduler, run manager and records), lateness = the run's created_at minus its
// scheduled_for; against 20 bare croner jobs on the same cron in the same run, lateness = when the
// callback ran minus the second it was due. Each side runs alone for the same window. The model
// server answers at once from a worker thread, so runs end well before the next fire.
// Target: p99 lateness under 20 ms. Also checks every fire ran exactly once.
// Usage: node scripts/bench/cron-lateness.bench.mjs (after a build).
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:http";
import { tmpdir } from "node:os";
import path from "node:path";
import { setTimeout as delay } from "node:timers/promises";
import { URL } from "node:url";
import { Worker, isMainThread, parentPort } from "node:worker_threads";

const JOBS = 20;
const WINDOW_SECONDS = 10;
const WARMUP_SECONDS = 2;
const CRON = "* * * * * *";
const TARGET_P99_MILLISECONDS = 20;

if (!isMainThread) {
  serveModel();
} else {
  await main();
}

/** Worker thread: a model that answers every request at once. */
function serveModel() {
  const server = createServer((request, response) => {
    request.resume();
    request.on("end", () => {
      response.writeHead(200, { "content-type": "application/json" });
      response.end(
        JSON.stringify({
          id: "chatcmpl-bench",
          object: "chat.completion",
          created: 0,
          model: "bench",
          choices: [{ index: 0, message: { role: "assistant", content: "done" }, finish_reason: "stop" }],
          usage: { prompt_tokens: 10, completion_tokens: 1, total_tokens: 11 },
        }),
      );
    });
  });
  server.listen(0, "127.0.0.1", () => parentPort.postMessage({ port: server.address().port }));
}

/** Waits until just after a whole second, so both windows hold the same number of fires. */
async function alignToSecond() {
  await delay(1000 - (Date.now() % 1000) + 100);
}

async function bareCroner() {
  const { Cron } = await import("croner");
  const lateness = [];
  await alignToSecond();
  const windowStart = Date.now();
  const jobs = Array.from(
    { length: JOBS },
    () =>
      new Cron(CRON, () => {
        const now = Date.now();
        if (now >= windowStart) lateness.push(now - Math.floor(now / 1000) * 1000);
      }),
  );
  await delay(WINDOW_SECONDS * 1000);
  for (const job of jobs) job.stop();
  return { lateness, duplicates: 0, skipped: 0 };
}

async function daemonScheduler(port) {
  const { startDaemon } = await import("../../dist/app/daemon.js");
  const { ConfigSchema } = await import("../../dist/config/config-schema.js");
  const { createLogger } = await import("../../dist/logging/logger.js");
  const root = mkdtempSync(path.join(tmpdir(), "agentd-bench-cron-"));
  for (const folder of ["agents", "presets"]) mkdirSync(path.join(root, folder));
  for (let index = 0; index < JOBS; index++) {
    writeFileSync(
      path.join(root, "agents", `ticker-${index}.md`),
      `---\ndescription: fires every second\nschedule:\n  cron: "${CRON}"\n  task: tick\n---\nSay done.\n`,
    );
  }
  const config = ConfigSchema.parse({
    agents_dir: path.join(root, "agents"),
    presets_dir: path.join(root, "presets"),
    data_dir: path.join(root, "data"),
    server: { port: 0 },
    llm: { base_url: `http://127.0.0.1:${port}/v1`, api_key: "bench", model: "bench" },
    concurrency: JOBS,
    log: { level: "silent" },
  });
  const logger = createLogger({ level: "silent", pretty: false });
  const daemon = await startDaemon({ config, version: "bench", overrides: { logger } });
  // The fires of the first seconds, while the start-up's work settles, are not counted.
  await delay(WARMUP_SECONDS * 1000);
  await alignToSecond();
  const windowStart = Date.now() - 100;
  await delay(WINDOW_SECONDS * 1000);
  await daemon.shutdown();
  const scheduledRuns = daemon.runs
    .list()
    .filter((run) => run.trigger.kind === "schedule" && Date.parse(run.trigger.scheduled_for) >= windowStart);
  const lateness = scheduledRuns.map(
    (run) => Date.parse(run.created_at) - Date.parse(run.trigger.scheduled_for),
  );
  const fires = new Set(scheduledRuns.map((run) => `${run.agent} ${run.trigger.scheduled_for}`));
  // A fire that came while the agent's previous run still ran is skipped (overlap: skip) and says so.
  const skipped = Array.from({ length: JOBS }, (_, index) =>
    daemon.events
      .poll(`ticker-${index}`, { after: 0, limit: 10_000 })
      .events.filter(
        (event) => event.type === "skipped" && Date.parse(event.data.scheduled_for) >= windowStart,
      ),
  ).flat().length;
  rmSync(root, { recursive: true, force: true });
  return { lateness, duplicates: scheduledRuns.length - fires.size, skipped };
}

function percentiles(values) {
  const sorted = [...values].sort((left, right) => left - right);
  const at = (fraction) => sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * fraction))];
  return { count: sorted.length, p50: at(0.5), p99: at(0.99), max: sorted.at(-1) };
}

async function main() {
  const model = new Worker(new URL(import.meta.url));
  const { port } = await new Promise((resolve) => model.once("message", resolve));
  const bare = await bareCroner();
  const daemon = await daemonScheduler(port);
  await model.terminate();

  const line = (name, figures) =>
    console.log(
      `${name.padEnd(26)} ${String(figures.count).padStart(4)} fires: p50 ${figures.p50} ms, p99 ${figures.p99} ms, max ${figures.max} ms`,
    );
  const bareFigures = percentiles(bare.lateness);
  const daemonFigures = percentiles(daemon.lateness);
  console.log(
    `${JOBS} jobs on "${CRON}" for ${WINDOW_SECONDS} s each; lateness after the second each fire was due:`,
  );
  line("bare croner", bareFigures);
  line("agentd scheduled runs", daemonFigures);
  console.log(`ratio p99 agentd/croner: ${(daemonFigures.p99 / Math.max(1, bareFigures.p99)).toFixed(2)}x`);
  console.log(
    `target p99 < ${TARGET_P99_MILLISECONDS} ms: ${daemonFigures.p99 < TARGET_P99_MILLISECONDS ? "met" : "MISSED"}`,
  );
  console.log(`fires that started more than one run: ${daemon.duplicates}`);
  console.log(`fires skipped because the agent's previous run still ran: ${daemon.skipped}`);
  if (daemon.duplicates > 0) process.exitCode = 1;
}
