// Issue 26 item 6: start-up time and memory against the size of the run history, for both stores.
// For each store and each size (1k, 10k, 50k, 200k finished runs by default, spread over 50 agents,
// two status events each), the history is written through the store classes of dist/ (the same
// code the daemon writes with, so the generator follows the store's format), then:
// - `agentd start` (dist/cli/main.js, a fresh node process) is timed from the spawn until GET
//   /health answers `ok`, and its RSS read from /proc at that moment;
// - `agentd run agent-0` (bin/agentd.js, as a user runs it) is timed from the spawn to its first
//   model request (a local server answering one streamed completion), and its peak RSS (VmHWM) read
//   from /proc then; the run then completes and the process must exit 0.
// Each start on the history is paired with a start on an empty store of the same kind (the same
// agents), in turns ABBA (empty first, then history first), so a change in the machine's load hits
// both alike; the first pair is a warm-up and not counted. Besides the wall time, each start's CPU
// time is measured: the process's own (utime + stime from /proc) and, for PostgreSQL, what the
// server's processes spent meanwhile. On a loaded machine the wall time mostly measures the wait
// for a core; the CPU time is the work itself. Printed as ratios to the empty start, per pair:
// median with quartiles and min-max, and the load average over each size. Target: at most 1.5x
// the empty start at 200k runs, time and RSS, both commands.
// PostgreSQL is a real server on loopback started by the test harness's helper
// (test/support/postgres-server.ts), fsync off as in the tests; skipped with a message when absent.
// Usage: node scripts/bench/start-history.bench.mjs [--stores files,postgres]
//          [--sizes 1000,10000,50000,200000] [--starts 5] [--commands start,run]
//          [--files-writer direct|store]
//          [--tmp /dev/shm] [--quick]   (after a build)
import { spawn } from "node:child_process";
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { once } from "node:events";
import { createServer as createHttpServer } from "node:http";
import { createServer } from "node:net";
import { loadavg, tmpdir, cpus } from "node:os";
import path from "node:path";
import { performance } from "node:perf_hooks";
import { setTimeout as sleep } from "node:timers/promises";
import { fileURLToPath } from "node:url";
import { stringify } from "yaml";
import { importTestSupport } from "./test-support-import.mjs";

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");
const MAIN = path.join(ROOT, "dist", "cli", "main.js");
const BIN = path.join(ROOT, "bin", "agentd.js");
const TARGET_RATIO = 1.5;
/** Runs written per round trip of the generator. */
const CHUNK = 1_000;

function option(name, fallback) {
  const at = process.argv.indexOf(`--${name}`);
  return at >= 0 && process.argv[at + 1] !== undefined ? process.argv[at + 1] : fallback;
}
const STORES = option("stores", "files,postgres").split(",");
/**
 * `--quick`: one start each on a history of 50 runs of 5 agents, without the warm-up pair (the
 * suite runs it so, to see it still runs).
 */
const QUICK = process.argv.includes("--quick") || process.env.AGENTD_BENCH_QUICK === "1";
/** Agents of each project, the history spread over them (5 in the quick mode: each start reads them). */
const AGENTS = QUICK ? 5 : 50;
const SIZES = option("sizes", QUICK ? "50" : "1000,10000,50000,200000")
  .split(",")
  .map(Number);
/** Pairs counted per size and command (after the warm-up pair): five give quartiles worth reading. */
const STARTS = Number(option("starts", QUICK ? "1" : "5"));
/** Uncounted pairs before the counted ones: none in the quick mode, which only checks that it runs. */
const WARM_UP_PAIRS = QUICK ? 0 : 1;
const COMMANDS = option("commands", "start,run").split(",");
/**
 * How the files store's history is written: `direct` (default) writes the files the store writes
 * — each `runs/<run>.json`, each run log, each agent's log — with the store's own index and journal
 * writers (writeIndex, OpenRunsJournal), in about a minute for 200k runs; `store` goes through the
 * store classes run by run, as PostgreSQL does (about 12 ms a run on a loaded machine: 40 min).
 */
const FILES_WRITER = option("files-writer", "direct");
/**
 * How PostgreSQL's history is written: `direct` (default) opens the store once (its migrations),
 * then inserts the rows its writer inserts (agentd_runs, agentd_events, agentd_event_counters) in
 * batches of 5,000 with unnest, as its write batches do; `store` goes through the store classes.
 */
const POSTGRES_WRITER = option("postgres-writer", "direct");
/** Where the projects (and so data_dir) are made: `--tmp /dev/shm` where the disk is slow to create files. */
const TMP = option("tmp", tmpdir());

const { EventBus } = await import("../../dist/events/event-bus.js");
const { EventStore } = await import("../../dist/events/event-store.js");
const { createLogger } = await import("../../dist/logging/logger.js");
const { openFilesStore } = await import("../../dist/store/files-store.js");
const logger = createLogger({ level: "silent", pretty: false });
const { writeIndex } = await import("../../dist/runs/rebuild-run-index.js");
const { OpenRunsJournal, noteNewest } = await import("../../dist/runs/open-runs-journal.js");
const { RunIndex } = await import("../../dist/runs/run-index.js");
const { RunStore } = await import("../../dist/runs/run-store.js");

/** A project of AGENTS plain agents; `store` is the config's `store` key (absent: files). */
function createProject(prefix, store) {
  const root = mkdtempSync(path.join(TMP, prefix));
  for (const folder of ["agents", "presets", "data"]) mkdirSync(path.join(root, folder));
  for (let index = 0; index < AGENTS; index++) {
    writeFileSync(
      path.join(root, "agents", `agent-${index}.md`),
      `---\ndescription: agent ${index} with a long history\ntask: report\n---\nReport what you find.\n`,
    );
  }
  const config = {
    agents_dir: "./agents",
    presets_dir: "./presets",
    data_dir: "./data",
    server: { host: "127.0.0.1", port: 0 },
    llm: { base_url: "http://127.0.0.1:9/v1", api_key: "bench", model: "bench" },
    log: { level: "warn", pretty: false },
    ...(store ? { store } : {}),
  };
  return { root, config };
}

/** Opens the project's store the way the daemon does, for the generator: nothing pruned. */
async function openProjectStore(project) {
  const dataDirectory = path.join(project.root, "data");
  if (project.config.store?.backend !== "postgres")
    return { store: openFilesStore({ dataDirectory, logger }), dataDirectory };
  const { openPostgresStore } = await import("../../dist/store/postgres/postgres-store.js");
  const store = await openPostgresStore({
    url: project.config.store.url,
    leaseMilliseconds: 30_000,
    bufferSize: 200,
    logger,
    retention: () => ({ days: null, runsPerAgent: null }),
  });
  return { store, dataDirectory };
}

/** The `index`-th of `size` finished runs: its record as created, and as finished. */
function historyRun(now, size, index) {
  const createdAt = new Date(now - (size - index) * 1_000).toISOString();
  const id = `r_${(now - (size - index) * 1_000).toString(36).padStart(9, "0")}${index.toString(36).padStart(4, "0")}bench000`;
  const created = {
    id,
    agent: `agent-${index % AGENTS}`,
    task: `report number ${index}`,
    status: "queued",
    trigger: { kind: "api" },
    definition_hash: "bench",
    created_at: createdAt,
    usage: { prompt_tokens: 0, completion_tokens: 0, total_tokens: 0 },
    cost_usd: 0,
  };
  const usage = { prompt_tokens: 120, completion_tokens: 30, total_tokens: 150 };
  const finished = {
    ...created,
    status: "completed",
    started_at: createdAt,
    ended_at: createdAt,
    usage,
    cost_usd: 0.0001,
    result: `Report ${created.task}: everything is in order.`,
  };
  return { created, finished, usage };
}

/**
 * The files store's history written as the store lays it out (see FILES_WRITER): each record file
 * and run log, each agent's log (event ids from 1), then the index and a journal begun with no open
 * run. Checked by opening it with the store: a start that would repair anything fails the bench.
 */
function writeFilesHistory(project, size) {
  const dataDirectory = path.join(project.root, "data");
  const runs = path.join(dataDirectory, "runs");
  mkdirSync(path.join(dataDirectory, "events"), { recursive: true });
  mkdirSync(runs, { recursive: true });
  const now = Date.now();
  const lastIds = new Map();
  const agentLines = new Map();
  const newest = new Map();
  const created = [];
  for (let index = 0; index < size; index++) {
    const run = historyRun(now, size, index);
    const { agent, id } = run.created;
    created.push(run.created);
    noteNewest(newest, run.created);
    writeFileSync(path.join(runs, `${id}.json`), `${JSON.stringify(run.finished, null, 2)}\n`);
    const lines = [{ status: "running" }, { status: "completed", usage: run.usage, cost_usd: 0.0001 }].map(
      (data) => {
        const eventId = (lastIds.get(agent) ?? 0) + 1;
        lastIds.set(agent, eventId);
        const event = { id: eventId, agent, run: id, type: "status", time: run.created.created_at, data };
        return `${JSON.stringify(event)}\n`;
      },
    );
    writeFileSync(path.join(runs, `${id}.events.jsonl`), lines.join(""));
    let pending = agentLines.get(agent);
    if (!pending) agentLines.set(agent, (pending = []));
    pending.push(...lines);
  }
  for (const [agent, lines] of agentLines)
    writeFileSync(path.join(dataDirectory, "events", `${agent}.jsonl`), lines.join(""));
  const index = new RunIndex({ runsDirectory: runs, logger });
  writeIndex(index.directory, created);
  index.open();
  const segments = index.sizes();
  index.close();
  const journal = new OpenRunsJournal({ runsDirectory: runs, logger });
  journal.read();
  journal.begin({ records: [], newest, segments });
  journal.close();
  const warnings = [];
  const quiet = () => undefined;
  const watching = {
    trace: quiet,
    debug: quiet,
    info: quiet,
    warn: (fields, message) => warnings.push(message ?? fields),
    error: (fields, message) => warnings.push(message ?? fields),
    child: () => watching,
  };
  const store = RunStore.open({ dataDirectory, logger: watching });
  store.close();
  if (warnings.length > 0)
    throw new Error(`the written history was repaired at open: ${warnings.join("; ")}`);
}

/**
 * `size` finished runs, newest a second ago and one second apart (well inside the default
 * retention), each created, then saved finished, with a `running` and a `completed` status event,
 * through the store's own classes.
 */
async function writeHistory(project, size) {
  if (project.config.store?.backend !== "postgres" && FILES_WRITER === "direct")
    return writeFilesHistory(project, size);
  if (project.config.store?.backend === "postgres" && POSTGRES_WRITER === "direct")
    return writePostgresHistory(project, size);
  const { store, dataDirectory } = await openProjectStore(project);
  const bus = store.createBus?.({ redact: (draft) => draft, now: () => new Date() }) ?? new EventBus();
  const events = await EventStore.open({ dataDirectory, bus, logger, log: store.events });
  const now = Date.now();
  for (let first = 0; first < size; first += CHUNK) {
    const records = [];
    for (let index = first; index < Math.min(size, first + CHUNK); index++)
      records.push(historyRun(now, size, index));
    await Promise.all(records.map(({ created }) => store.runs.create(created)));
    const saves = [];
    for (const { created, finished, usage } of records) {
      bus.publish({ agent: created.agent, run: created.id, type: "status", data: { status: "running" } });
      saves.push(store.runs.save(finished));
      bus.publish({
        agent: created.agent,
        run: created.id,
        type: "status",
        data: { status: "completed", usage, cost_usd: 0.0001 },
      });
    }
    await Promise.all(saves);
    await store.committed?.();
  }
  events.close();
  await store.close();
}

/** PostgreSQL's history as its write batches leave it (see POSTGRES_WRITER). */
async function writePostgresHistory(project, size) {
  const { store } = await openProjectStore(project);
  await store.close();
  const { default: pg } = await import("pg");
  const client = new pg.Client({ connectionString: project.config.store.url });
  await client.connect();
  try {
    const now = Date.now();
    const lastIds = new Map();
    const lastTimes = new Map();
    const BATCH = 5_000;
    for (let first = 0; first < size; first += BATCH) {
      const runs = [];
      for (let index = first; index < Math.min(size, first + BATCH); index++)
        runs.push(historyRun(now, size, index));
      const events = { agent: [], id: [], run: [], line: [] };
      for (const { created, usage } of runs) {
        for (const data of [{ status: "running" }, { status: "completed", usage, cost_usd: 0.0001 }]) {
          const id = (lastIds.get(created.agent) ?? 0) + 1;
          lastIds.set(created.agent, id);
          lastTimes.set(created.agent, created.created_at);
          const event = {
            id,
            agent: created.agent,
            run: created.id,
            type: "status",
            time: created.created_at,
            data,
          };
          events.agent.push(created.agent);
          events.id.push(id);
          events.run.push(created.id);
          events.line.push(JSON.stringify(event));
        }
      }
      await client.query("BEGIN");
      const {
        rows: [{ change }],
      } = await client.query("SELECT nextval('agentd_changes')::text AS change");
      await client.query(
        `INSERT INTO agentd_runs (id, agent, node, status, created_at, ended_at, parent_run, record, change, claimed_by)
         SELECT id, agent, 'bench', status, created_at, ended_at, NULL, record, $1, 'bench'
         FROM unnest($2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[])
           AS r(id, agent, status, created_at, ended_at, record)`,
        [
          change,
          runs.map(({ finished }) => finished.id),
          runs.map(({ finished }) => finished.agent),
          runs.map(({ finished }) => finished.status),
          runs.map(({ finished }) => finished.created_at),
          runs.map(({ finished }) => finished.ended_at),
          runs.map(({ finished }) => JSON.stringify(finished)),
        ],
      );
      await client.query(
        `INSERT INTO agentd_events (agent, id, run, line, change, position)
         SELECT agent, id, run, line, $1, position
         FROM unnest($2::text[], $3::bigint[], $4::text[], $5::text[]) WITH ORDINALITY AS e(agent, id, run, line, position)`,
        [change, events.agent, events.id, events.run, events.line],
      );
      await client.query("COMMIT");
    }
    const agents = [...lastIds.keys()];
    await client.query(
      `INSERT INTO agentd_event_counters (agent, last_id, last_time)
       SELECT * FROM unnest($1::text[], $2::bigint[], $3::text[])`,
      [agents, agents.map((agent) => lastIds.get(agent)), agents.map((agent) => lastTimes.get(agent))],
    );
    await client.query("ANALYZE");
  } finally {
    await client.end();
  }
}

async function freePort() {
  const server = createServer().listen(0, "127.0.0.1");
  await new Promise((resolve) => server.once("listening", resolve));
  const { port } = server.address();
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/** A process's resident memory now (`VmRSS`) or at its peak so far (`VmHWM`), in bytes. */
function residentBytes(pid, field = "VmRSS") {
  const status = readFileSync(`/proc/${pid}/status`, "utf8");
  const kilobytes = Number(new RegExp(`${field}:\\s+(\\d+)`).exec(status)?.[1] ?? 0);
  return kilobytes * 1024;
}

/** The CPU time a process has spent so far (user + system), in seconds. */
function cpuSeconds(pid) {
  return cpuOf(readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]?.split(" ") ?? []);
}

/**
 * The CPU time PostgreSQL's server has spent so far, in seconds: its postmaster (found by the port
 * of `url`) and its children (backends, autovacuum, the writers). 0 for the files store.
 */
function serverCpuSeconds(url) {
  if (url === undefined) return 0;
  const port = /:(\d+)\//.exec(url)?.[1] ?? "";
  const processes = [];
  for (const name of readdirSync("/proc")) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const fields = readFileSync(`/proc/${name}/stat`, "utf8").split(") ")[1]?.split(" ") ?? [];
      const command = readFileSync(`/proc/${name}/cmdline`, "utf8").split("\0");
      processes.push({ pid: name, parent: fields[1], cpu: cpuOf(fields), command });
    } catch {
      // gone meanwhile
    }
  }
  const master = processes.find(
    ({ command }) => /postgres$/.test(command[0] ?? "") && command.includes("-p") && command.includes(port),
  );
  if (!master) return 0;
  let total = 0;
  for (const one of processes) if (one.pid === master.pid || one.parent === master.pid) total += one.cpu;
  return total;
}

/** utime + stime of a `/proc/<pid>/stat` line's fields after the command, in seconds (100 ticks a second). */
function cpuOf(fields) {
  return (Number(fields[11] ?? 0) + Number(fields[12] ?? 0)) / 100;
}

/**
 * A model server for `agentd run`: answers every request with one streamed completion, "done";
 * at a process's first model request, `onRequest` measures it (before the answer goes out).
 */
async function startModelServer() {
  const chunk = {
    id: "bench",
    object: "chat.completion.chunk",
    created: 0,
    model: "bench",
    choices: [{ index: 0, delta: { role: "assistant", content: "done" }, finish_reason: "stop" }],
    usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 },
  };
  const server = createHttpServer((request, response) => {
    if (request.url?.endsWith("/chat/completions")) server.onRequest?.();
    request.resume();
    request.on("end", () => {
      response.writeHead(200, { "content-type": "text/event-stream" });
      response.end(`data: ${JSON.stringify(chunk)}\n\ndata: [DONE]\n\n`);
    });
  }).listen(0, "127.0.0.1");
  await once(server, "listening");
  return server;
}

let modelServer;

/**
 * `agentd run agent-0` on the project: seconds from the spawn to its first model request, and its
 * peak RSS then (everything the store's opening read is behind it). Waits for its exit (0).
 */
async function timeRun(project) {
  modelServer ??= await startModelServer();
  const configFile = path.join(project.root, "config.run.yaml");
  const llm = { ...project.config.llm, base_url: `http://127.0.0.1:${modelServer.address().port}/v1` };
  writeFileSync(configFile, stringify({ ...project.config, llm }));
  let measured;
  const serverUrl = project.config.store?.url;
  const serverBefore = serverCpuSeconds(serverUrl);
  const started = performance.now();
  const child = spawn(process.execPath, [BIN, "run", "agent-0", "report", "--config", configFile], {
    cwd: project.root,
    stdio: ["ignore", "ignore", "pipe"],
  });
  modelServer.onRequest = () => {
    measured ??= {
      seconds: (performance.now() - started) / 1000,
      rss: residentBytes(child.pid, "VmHWM"),
      cpu: cpuSeconds(child.pid) + serverCpuSeconds(serverUrl) - serverBefore,
    };
  };
  let stderr = "";
  child.stderr.setEncoding("utf8").on("data", (chunk) => (stderr += chunk));
  const [code] = await once(child, "exit");
  modelServer.onRequest = undefined;
  if (code !== 0 || !measured) throw new Error(`agentd run exited ${code}: ${stderr}`);
  return measured;
}

/** `agentd start` on the project: seconds from the spawn to /health `ok`, and RSS then. */
async function timeStart(project) {
  const port = await freePort();
  const configFile = path.join(project.root, "config.timed.yaml");
  writeFileSync(configFile, stringify({ ...project.config, server: { host: "127.0.0.1", port } }));
  const serverUrl = project.config.store?.url;
  const serverBefore = serverCpuSeconds(serverUrl);
  const started = performance.now();
  const child = spawn(process.execPath, [MAIN, "start", "--config", configFile], {
    cwd: project.root,
    stdio: ["ignore", "ignore", "pipe"],
  });
  let stderr = "";
  child.stderr.setEncoding("utf8").on("data", (chunk) => (stderr += chunk));
  const exited = new Promise((resolve) => child.once("exit", resolve));
  let exitCode;
  void exited.then((code) => (exitCode = code));
  for (;;) {
    if (exitCode !== undefined) throw new Error(`agentd start exited ${exitCode}: ${stderr}`);
    try {
      const answer = await globalThis.fetch(`http://127.0.0.1:${port}/health`);
      if (answer.status === 200 && (await answer.json()).status === "ok") break;
    } catch {
      // not listening yet
    }
    await sleep(2);
  }
  const seconds = (performance.now() - started) / 1000;
  const rss = residentBytes(child.pid);
  const cpu = cpuSeconds(child.pid) + serverCpuSeconds(serverUrl) - serverBefore;
  child.kill("SIGKILL");
  await exited;
  return { seconds, rss, cpu };
}

/** The value at fraction `at` (0 to 1) of sorted `values`, interpolated between neighbours. */
function quantile(sorted, at) {
  const position = (sorted.length - 1) * at;
  const below = Math.floor(position);
  const above = Math.min(sorted.length - 1, below + 1);
  return sorted[below] + (sorted[above] - sorted[below]) * (position - below);
}

function spread(values) {
  const sorted = [...values].sort((left, right) => left - right);
  return {
    median: quantile(sorted, 0.5),
    q1: quantile(sorted, 0.25),
    q3: quantile(sorted, 0.75),
    min: sorted[0],
    max: sorted.at(-1),
  };
}

const ratioText = ({ median, q1, q3, min, max }) =>
  `${median.toFixed(2)}x [q ${q1.toFixed(2)}-${q3.toFixed(2)}, ${min.toFixed(2)}-${max.toFixed(2)}]`;
const loadText = ({ min, max }) => `load ${min.toFixed(1)}-${max.toFixed(1)}`;
const COMMAND_LABELS = { start: "start", run: "run" };
const TIMERS = { start: timeStart, run: timeRun };

/**
 * `time` (timeStart or timeRun) on `empty` and `full` in pairs, in turns ABBA (empty first, then
 * full first), so a trend in the machine's load favours neither; each full start against the
 * empty one of its pair; the load average sampled after each pair.
 */
async function measure(time, empty, full) {
  const pairs = [];
  const loads = [];
  for (let round = 0; round < WARM_UP_PAIRS + STARTS; round++) {
    let base;
    let loaded;
    if (round % 2 === 0) {
      base = await time(empty);
      loaded = await time(full);
    } else {
      loaded = await time(full);
      base = await time(empty);
    }
    if (round >= WARM_UP_PAIRS) {
      pairs.push({ base, loaded });
      loads.push(loadavg()[0]);
    }
  }
  return {
    load: spread(loads),
    baseSeconds: spread(pairs.map(({ base }) => base.seconds)),
    loadedSeconds: spread(pairs.map(({ loaded }) => loaded.seconds)),
    baseRss: spread(pairs.map(({ base }) => base.rss)),
    loadedRss: spread(pairs.map(({ loaded }) => loaded.rss)),
    baseCpu: spread(pairs.map(({ base }) => base.cpu)),
    loadedCpu: spread(pairs.map(({ loaded }) => loaded.cpu)),
    time: spread(pairs.map(({ base, loaded }) => loaded.seconds / base.seconds)),
    cpu: spread(pairs.map(({ base, loaded }) => loaded.cpu / base.cpu)),
    memory: spread(pairs.map(({ base, loaded }) => loaded.rss / base.rss)),
  };
}

let postgres;
const folders = [];
let databases = 0;
/** A project on a fresh store of `kind`, or undefined when that store cannot run here. */
async function projectFor(kind, label) {
  if (kind === "files") {
    const project = createProject(`agentd-bench-history-${label}-`);
    folders.push(project.root);
    return project;
  }
  if (postgres === undefined) {
    const helper = await importTestSupport("test/support/postgres-server.ts");
    const missing = helper.postgresMissingReason();
    if (missing !== undefined) return undefined;
    postgres = await helper.startPostgres();
  }
  databases += 1;
  const url = await postgres.createDatabase(`history_${label}_${databases}`);
  const project = createProject(`agentd-bench-history-${label}-`, { backend: "postgres", url });
  folders.push(project.root);
  return project;
}

const results = [];
try {
  for (const kind of STORES) {
    const empty = await projectFor(kind, "empty");
    if (empty === undefined) {
      console.log(`${kind}: skipped (PostgreSQL is not installed)`);
      continue;
    }
    for (const size of SIZES) {
      const full = await projectFor(kind, String(size));
      const writing = performance.now();
      await writeHistory(full, size);
      const written = ((performance.now() - writing) / 1000).toFixed(1);
      for (const command of COMMANDS) {
        const measured = await measure(TIMERS[command], empty, full);
        results.push({ kind, size, command, ...measured });
        const until = command === "start" ? "to /health ok" : "to first model request";
        const memory = command === "start" ? "RSS" : "peak RSS";
        console.log(
          `${kind.padEnd(8)} ${COMMAND_LABELS[command].padEnd(5)} ${String(size).padStart(7)} runs ` +
            `(written in ${written} s): ${until} ${(measured.loadedSeconds.median * 1000).toFixed(0)} ms vs empty ` +
            `${(measured.baseSeconds.median * 1000).toFixed(0)} ms = ${ratioText(measured.time)}; ` +
            `CPU${kind === "postgres" ? " (with the server's)" : ""} ${(measured.loadedCpu.median * 1000).toFixed(0)} ms vs ` +
            `${(measured.baseCpu.median * 1000).toFixed(0)} ms = ${ratioText(measured.cpu)}; ` +
            `${memory} ${(measured.loadedRss.median / 1048576).toFixed(0)} MB vs ` +
            `${(measured.baseRss.median / 1048576).toFixed(0)} MB = ${ratioText(measured.memory)}; ` +
            loadText(measured.load),
        );
      }
    }
  }
} finally {
  modelServer?.close();
  modelServer?.closeAllConnections();
  await postgres?.stop();
  for (const folder of folders) rmSync(folder, { recursive: true, force: true });
}

console.log(
  `machine: ${cpus().length} cores, load average ${loadavg()
    .map((value) => value.toFixed(1))
    .join(" ")}; ` +
    `${STARTS} pairs each (ABBA) after ${WARM_UP_PAIRS} uncounted pair(s); ratios per pair: median [q quartiles, min-max]`,
);
for (const kind of STORES) {
  for (const command of COMMANDS) {
    const largest = results.filter((result) => result.kind === kind && result.command === command).at(-1);
    if (!largest) continue;
    const verdict = (ratio) => (ratio.median <= TARGET_RATIO ? "met" : "MISSED");
    console.log(
      `${kind} ${command}: target <= ${TARGET_RATIO}x the empty start at ${largest.size} runs: ` +
        `time ${verdict(largest.time)} (CPU ${verdict(largest.cpu)}), RSS ${verdict(largest.memory)}` +
        (largest.size < 200_000 ? " (the target is set at 200k runs)" : ""),
    );
  }
}
