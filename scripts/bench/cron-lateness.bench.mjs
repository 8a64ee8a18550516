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
// Beside it, `<name>.windows.json`: each second's span from the fire to its first and last model
// request, which scripts/bench/profile-launches.mjs restricts the profile to. The bench also
// prints the event loop's CPU (its thread's schedstat) from each fire to the 1st, 10th and 20th
// model request, and the whole process's to the 20th: figures the machine's load moves far less
// than the wall-clock lateness.
import { readFileSync, readdirSync, readlinkSync, rmSync } from "node:fs";
import { loadavg } from "node:os";
import { setTimeout } from "node:timers";
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

/** CPU time (ns) the process's main thread (the daemon's event loop) has used, from its schedstat. */
function mainThreadCpuNanoseconds() {
  return Number(readFileSync(`/proc/self/task/${process.pid}/schedstat`, "utf8").split(" ")[0]);
}

/**
 * CPU time (ns) of every thread of the process but `except` (the model server's): the event loop
 * plus libuv's threads (file creation, writes, fsyncs), the garbage collector's and V8's.
 */
function processCpuNanoseconds(except) {
  let total = 0;
  for (const task of readdirSync("/proc/self/task")) {
    if (task === except) continue;
    try {
      total += Number(readFileSync(`/proc/self/task/${task}/schedstat`, "utf8").split(" ")[0]);
    } catch {
      // A thread that ended meanwhile.
    }
  }
  return total;
}

if (!isMainThread) {
  // The model server keeps when each request arrived (wall clock) and hands them over when asked,
  // with the main thread's CPU then; and that CPU shortly before each whole second (the fire),
  // when the previous second's runs have ended: the event loop's CPU from a fire to each request.
  let arrivals = [];
  let arrivalCpu = [];
  let arrivalTicks = [];
  let secondCpu = {};
  let secondProcessCpu = {};
  let lastProcessCpu = {};
  const requestsBySecond = new Map();
  const ownThread = readlinkSync("/proc/thread-self").split("/").at(-1);
  const port = await serveFinalAnswers({
    onRequest: () => {
      arrivals.push(Date.now());
      arrivalCpu.push(mainThreadCpuNanoseconds());
      arrivalTicks.push(Number(process.hrtime.bigint() / 1000n));
      const second = Math.floor(arrivals.at(-1) / 1000) * 1000;
      const count = (requestsBySecond.get(second) ?? 0) + 1;
      requestsBySecond.set(second, count);
      if (count === JOBS) lastProcessCpu[second] = processCpuNanoseconds(ownThread);
    },
  });
  const beforeEachSecond = () => {
    const now = Date.now();
    const next = Math.ceil((now + 5) / 1000) * 1000;
    setTimeout(
      () => {
        secondCpu[next] = mainThreadCpuNanoseconds();
        secondProcessCpu[next] = processCpuNanoseconds(ownThread);
        requestsBySecond.delete(next - 2000);
        beforeEachSecond();
      },
      next - now - 3,
    );
  };
  beforeEachSecond();
  parentPort.on("message", () => {
    parentPort.postMessage({
      arrivals,
      arrivalCpu,
      arrivalTicks,
      secondCpu,
      secondProcessCpu,
      lastProcessCpu,
    });
    arrivals = [];
    arrivalCpu = [];
    arrivalTicks = [];
    secondCpu = {};
    secondProcessCpu = {};
    lastProcessCpu = {};
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
  return await new Promise((resolve) => model.once("message", resolve));
}

/**
 * Each second's span from its fire to its last model request, in the monotonic clock's µs (the
 * CPU profile's clock): what scripts/bench/profile-launches.mjs restricts a profile to.
 */
function launchWindows({ arrivals, arrivalTicks }) {
  const bySecond = new Map();
  arrivals.forEach((arrival, index) => {
    const second = Math.floor(arrival / 1000) * 1000;
    const fire = arrivalTicks[index] - (arrival - second) * 1000;
    const window = bySecond.get(second) ?? {
      fire,
      first: arrivalTicks[index],
      last: arrivalTicks[index],
      requests: 0,
    };
    window.last = Math.max(window.last, arrivalTicks[index]);
    window.requests += 1;
    bySecond.set(second, window);
  });
  return [...bySecond.values()];
}

/**
 * The main thread's CPU (ms) from each second's fire (sampled 3 ms before it) to its 1st, 10th
 * and 20th model request, and the whole process's (but the model server's thread) to the 20th,
 * one entry per second whose 20 requests all came within it.
 */
function cpuToRequests({ arrivals, arrivalCpu, secondCpu, secondProcessCpu, lastProcessCpu }) {
  const bySecond = new Map();
  arrivals.forEach((arrival, index) => {
    const second = Math.floor(arrival / 1000) * 1000;
    if (!bySecond.has(second)) bySecond.set(second, []);
    bySecond.get(second).push(arrivalCpu[index]);
  });
  const figures = [];
  for (const [second, cpu] of bySecond) {
    const start = secondCpu[second];
    if (start === undefined || cpu.length < JOBS) continue;
    const processCpu = (lastProcessCpu[second] - secondProcessCpu[second]) / 1e6;
    figures.push([...[0, 9, JOBS - 1].map((rank) => (cpu[rank] - start) / 1e6), processCpu]);
  }
  return figures;
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
  const taken = await takeArrivals(model);
  const { arrivals } = taken;
  await stopProfile(launchWindows(taken));
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
    cpuToRequests: cpuToRequests(taken),
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
  // CPU rather than wall time: the machine's load moves it far less.
  const seconds = rounds.flatMap((round) => round.daemon.cpuToRequests);
  const cpuLine = (rank, name) => {
    const sorted = seconds.map((figures) => figures[rank]).sort((left, right) => left - right);
    const at = (fraction) => sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * fraction))];
    return `${name} ${at(0.5)?.toFixed(1)} ms (quartiles ${at(0.25)?.toFixed(1)}–${at(0.75)?.toFixed(1)})`;
  };
  if (seconds.length === 0) console.log(`event loop's CPU: no second had all ${JOBS} model requests`);
  else
    console.log(
      `event loop's CPU from the fire to the model request, ${seconds.length} seconds: ` +
        `${cpuLine(0, "1st")}, ${cpuLine(1, "10th")}, ${cpuLine(2, `${JOBS}th`)}; ` +
        `the whole process's (libuv's threads too) to the ${JOBS}th: ${cpuLine(3, "").trim()}`,
    );
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
