// How late scheduled runs start: 20 agents on a every-second cron in the daemon (dist/app/daemon.js,
// the real scheduler, run manager and records), lateness = the run's created_at minus its
// scheduled_for, then its started_at (status `running`) and the arrival of its model request at the
// scripted server, each minus the second it was due; against 20 bare croner jobs on the same cron in the same run, lateness = when the
// callback ran minus the second it was due. Each side runs alone for the same window, three times,
// alternating; the figures are the median of the rounds and their range. The model
// server answers at once from a worker thread, so runs end well before the next fire.
// Targets: p99 creation lateness under 20 ms, model request p99 within 30 ms of the fire. Also
// checks every fire ran exactly once.
// Usage: node scripts/bench/cron-lateness.bench.mjs [--quick] [--cpu-prof-dir=<dir>] (after a build).
// `--cpu-prof-dir`: a CPU profile of the daemon's measured window in each round (the main thread,
// where the scheduler, the launches and the model client run; not the warm-up, not croner's window).
import { rmSync } from "node:fs";
import { loadavg } from "node:os";
import { setTimeout as delay } from "node:timers/promises";
import { URL } from "node:url";
import { Worker, isMainThread, parentPort } from "node:worker_threads";
import { QUICK, createBenchProject, serveFinalAnswers, spread, startBenchDaemon } from "./bench-daemon.mjs";
import { startThreadProfile } from "./thread-profile.mjs";

const JOBS = 20;
const WINDOW_SECONDS = QUICK ? 1 : 10;
const WARMUP_SECONDS = 2;
const CRON = "* * * * * *";
const TARGET_P99_MILLISECONDS = 20;
const TARGET_MODEL_REQUEST_P99_MILLISECONDS = 30;
/** Windows measured for each side, alternating, so a change in the machine's load hits both. */
const ROUNDS = QUICK ? 1 : 3;
const PROFILE_DIRECTORY = process.argv
  .find((argument) => argument.startsWith("--cpu-prof-dir="))
  ?.slice("--cpu-prof-dir=".length);

if (!isMainThread) {
  // The model server keeps when each request arrived (wall clock) and hands them over when asked.
  let arrivals = [];
  const port = await serveFinalAnswers({ onRequest: () => arrivals.push(Date.now()) });
  parentPort.on("message", () => {
    parentPort.postMessage({ arrivals });
    arrivals = [];
  });
  parentPort.postMessage({ port });
} else {
  await main();
}

/** Starts profiling this thread when asked to (--cpu-prof-dir); returns what stops it. */
function startProfile(name) {
  return startThreadProfile(PROFILE_DIRECTORY, name);
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

/** The model requests that arrived since the last call, as times (ms since the epoch). */
async function takeArrivals(model) {
  model.postMessage("arrivals");
  const { arrivals } = await new Promise((resolve) => model.once("message", resolve));
  return arrivals;
}

async function daemonScheduler(port, model, round) {
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
  const stopProfile = await startProfile(`cron-lateness-daemon-round-${round + 1}`);
  await takeArrivals(model);
  await delay(WINDOW_SECONDS * 1000);
  // Each fire's run asks the model once, well within the second it was due.
  const arrivals = await takeArrivals(model);
  await stopProfile();
  await daemon.shutdown();
  const scheduledRuns = (await daemon.runs.list({ limit: 100_000 })).filter(
    (run) => run.trigger.kind === "schedule" && Date.parse(run.trigger.scheduled_for) >= windowStart,
  );
  const lateness = scheduledRuns.map(
    (run) => Date.parse(run.created_at) - Date.parse(run.trigger.scheduled_for),
  );
  const startLateness = scheduledRuns
    .filter((run) => run.started_at !== undefined)
    .map((run) => Date.parse(run.started_at) - Date.parse(run.trigger.scheduled_for));
  const launchDelay = scheduledRuns
    .filter((run) => run.started_at !== undefined)
    .map((run) => Date.parse(run.started_at) - Date.parse(run.created_at));
  const requestLateness = arrivals.map((arrival) => arrival - Math.floor(arrival / 1000) * 1000);
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
  return {
    lateness,
    startLateness,
    launchDelay,
    requestLateness,
    duplicates: scheduledRuns.length - fires.size,
    skipped,
  };
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
    const daemon = await daemonScheduler(port, model, round);
    rounds.push({
      bare,
      daemon,
      bareFigures: percentiles(bare.lateness),
      daemonFigures: percentiles(daemon.lateness),
      startFigures: percentiles(daemon.startLateness),
      launchFigures: percentiles(daemon.launchDelay),
      requestFigures: percentiles(daemon.requestLateness),
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
    "agentd runs created",
    rounds.map((round) => round.daemonFigures),
  );
  line(
    "agentd runs running",
    rounds.map((round) => round.startFigures),
  );
  line(
    "  running after created",
    rounds.map((round) => round.launchFigures),
  );
  line(
    "agentd model requests",
    rounds.map((round) => round.requestFigures),
  );
  const ratioOf = (key, fraction) =>
    spread(rounds.map((round) => round[key][fraction] / Math.max(1, round.bareFigures[fraction])));
  for (const [name, key] of [
    ["created", "daemonFigures"],
    ["running", "startFigures"],
    ["model request", "requestFigures"],
  ]) {
    const p50 = ratioOf(key, "p50");
    const p99 = ratioOf(key, "p99");
    console.log(
      `ratio ${name}/croner: p50 ${p50.median.toFixed(2)}x (${p50.min.toFixed(2)}–${p50.max.toFixed(2)}), ` +
        `p99 ${p99.median.toFixed(2)}x (${p99.min.toFixed(2)}–${p99.max.toFixed(2)})`,
    );
  }
  const requestP99 = spread(rounds.map((round) => round.requestFigures.p99));
  console.log(
    `target model request p99 < ${TARGET_MODEL_REQUEST_P99_MILLISECONDS} ms after the fire: ` +
      `${requestP99.median < TARGET_MODEL_REQUEST_P99_MILLISECONDS ? "met" : "MISSED"}`,
  );
  console.log(
    `load average ${loadavg()
      .map((load) => load.toFixed(2))
      .join(" ")}`,
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
