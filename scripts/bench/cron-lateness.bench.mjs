// How late scheduled runs start: 20 agents on a every-second cron in the daemon (dist/app/daemon.js,
// the real scheduler, run manager and records), lateness = the run's created_at minus its
// scheduled_for; against 20 bare croner jobs on the same cron in the same run, lateness = when the
// callback ran minus the second it was due. Each side runs alone for the same window, three times,
// alternating; the figures are the median of the rounds and their range. The model
// server answers at once from a worker thread, so runs end well before the next fire.
// Target: p99 lateness under 20 ms. Also checks every fire ran exactly once.
// Usage: node scripts/bench/cron-lateness.bench.mjs (after a build).
import { rmSync } from "node:fs";
import { setTimeout as delay } from "node:timers/promises";
import { URL } from "node:url";
import { Worker, isMainThread, parentPort } from "node:worker_threads";
import { createBenchProject, serveFinalAnswers, spread, startBenchDaemon } from "./bench-daemon.mjs";

const JOBS = 20;
const WINDOW_SECONDS = 10;
const WARMUP_SECONDS = 2;
const CRON = "* * * * * *";
const TARGET_P99_MILLISECONDS = 20;
/** Windows measured for each side, alternating, so a change in the machine's load hits both. */
const ROUNDS = 3;

if (!isMainThread) {
  parentPort.postMessage({ port: await serveFinalAnswers() });
} else {
  await main();
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
  const agents = Object.fromEntries(
    Array.from({ length: JOBS }, (_, index) => [
      `ticker-${index}`,
      `---\ndescription: fires every second\nschedule:\n  cron: "${CRON}"\n  task: tick\n---\nSay done.\n`,
    ]),
  );
  const root = createBenchProject("agentd-bench-cron-", agents);
  const daemon = await startBenchDaemon({ root, modelPort: port, settings: { concurrency: JOBS } });
  // The fires of the first seconds, while the start-up's work settles, are not counted.
  await delay(WARMUP_SECONDS * 1000);
  // The same window as bare croner's: the fires due in the WINDOW_SECONDS seconds after this one.
  await alignToSecond();
  const windowStart = Date.now();
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
  const rounds = [];
  for (let round = 0; round < ROUNDS; round++) {
    const bare = await bareCroner();
    const daemon = await daemonScheduler(port);
    rounds.push({
      bare,
      daemon,
      bareFigures: percentiles(bare.lateness),
      daemonFigures: percentiles(daemon.lateness),
    });
  }
  await model.terminate();

  const milliseconds = (values) => {
    const { median, min, max } = spread(values);
    return `${median} ms (${min}–${max})`;
  };
  const line = (name, figures) =>
    console.log(
      `${name.padEnd(24)} ${figures.map((round) => round.count).join("/")} fires: ` +
        `p50 ${milliseconds(figures.map((round) => round.p50))}, p99 ${milliseconds(figures.map((round) => round.p99))}, ` +
        `max ${milliseconds(figures.map((round) => round.max))}`,
    );
  console.log(
    `${JOBS} jobs on "${CRON}" for ${WINDOW_SECONDS} s each, ${ROUNDS} rounds (croner, then agentd); ` +
      "lateness after the second each fire was due, median of the rounds (min–max):",
  );
  line(
    "bare croner",
    rounds.map((round) => round.bareFigures),
  );
  line(
    "agentd scheduled runs",
    rounds.map((round) => round.daemonFigures),
  );
  const ratio = spread(rounds.map((round) => round.daemonFigures.p99 / Math.max(1, round.bareFigures.p99)));
  const p99 = spread(rounds.map((round) => round.daemonFigures.p99));
  console.log(
    `ratio p99 agentd/croner: ${ratio.median.toFixed(2)}x (${ratio.min.toFixed(2)}–${ratio.max.toFixed(2)})`,
  );
  console.log(
    `target p99 < ${TARGET_P99_MILLISECONDS} ms: ${p99.median < TARGET_P99_MILLISECONDS ? "met" : "MISSED"}`,
  );
  const duplicates = rounds.reduce((sum, round) => sum + round.daemon.duplicates, 0);
  console.log(`fires that started more than one run: ${duplicates}`);
  console.log(
    `fires skipped because the agent's previous run still ran: ${rounds.reduce((sum, round) => sum + round.daemon.skipped, 0)}`,
  );
  if (duplicates > 0) process.exitCode = 1;
}
