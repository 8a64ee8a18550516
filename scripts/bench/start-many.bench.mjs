// Cold start with 1,000 agents: `agentd start` (dist/cli/main.js, a fresh node process) until
// GET /health answers (polled from the spawn: the daemon listens before it reads its agents and
// answers "starting" meanwhile) and until it is ready (its `listening` line, every route served,
// /health "ok"), against a bare node + fastify process started the same way until its /health
// answers, measured alternately in the same run (median of a few starts each): a first start on a
// fresh data_dir, and a restart on the data_dir it left (parsed agents cached). Then the
// heap an idle scheduled agent costs: a daemon with the 1,000 agents on a schedule against the same
// daemon with the same agents unscheduled, each in its own process after a full GC.
// Targets: 1,000 agents to /health under 0.6 s; under 20 KB per idle scheduled agent.
// Usage: node scripts/bench/start-many.bench.mjs [--quick] (after a build). `--quick`: 10 agents, one
// start of each kind, no warm-up (the suite runs it so, to see it still runs).
import { spawn } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import os, { tmpdir } from "node:os";
import path from "node:path";
import { performance } from "node:perf_hooks";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import { stringify } from "yaml";
import { QUICK } from "./bench-daemon.mjs";

const AGENTS = QUICK ? 10 : 1_000;
const STARTS = QUICK ? 1 : 5;
const TARGET_START_SECONDS = 0.6;
const TARGET_BYTES_PER_AGENT = 20 * 1024;
const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");
const MAIN = path.join(ROOT, "dist", "cli", "main.js");

if (process.argv[2] === "--heap") await reportHeap(process.argv[3]);
else if (process.argv[2] === "--bare") await serveBareHealth();
else await main();

/** A folder of `AGENTS` agents (each with its own daily cron when `scheduled`) and its config. */
function createProject(scheduled) {
  const root = mkdtempSync(path.join(tmpdir(), "agentd-bench-many-"));
  for (const folder of ["agents", "presets"]) mkdirSync(path.join(root, folder));
  for (let index = 0; index < AGENTS; index++) {
    const frontmatter = {
      description: `agent ${index} of a large folder`,
      task: "report",
      ...(scheduled ? { schedule: { cron: `${index % 60} ${Math.floor(index / 60) % 24} * * *` } } : {}),
    };
    writeFileSync(
      path.join(root, "agents", `agent-${index}.md`),
      `---\n${stringify(frontmatter)}---\nReport what you find.\n`,
    );
  }
  const configFile = path.join(root, "config.yaml");
  writeFileSync(
    configFile,
    stringify({
      agents_dir: "./agents",
      presets_dir: "./presets",
      data_dir: "./data",
      server: { host: "127.0.0.1", port: 0 },
      llm: { base_url: "http://127.0.0.1:9/v1", api_key: "bench", model: "bench" },
      log: { level: "warn", pretty: false },
    }),
  );
  return { root, configFile };
}

/** Child process: a bare fastify with GET /health, printing its URL like the daemon does. */
async function serveBareHealth() {
  const { default: Fastify } = await import("fastify");
  const app = Fastify();
  app.get("/health", async () => ({ status: "ok" }));
  await app.listen({ host: "127.0.0.1", port: 0 });
  console.log(JSON.stringify({ event: "listening", url: `http://127.0.0.1:${app.server.address().port}` }));
}

/** A port free right now (the daemon is given one so /health can be polled before it says where). */
async function freePort() {
  const server = createServer().listen(0, "127.0.0.1");
  await new Promise((resolve) => server.once("listening", resolve));
  const { port } = server.address();
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/**
 * Spawns `agentd start` on a free port and polls its /health from the spawn: seconds to the first
 * 200 (whatever its status) and to the `listening` line that says it is ready.
 */
async function timeDaemon(configFile, cwd) {
  const port = await freePort();
  const timedConfig = path.join(path.dirname(configFile), "config.timed.yaml");
  writeFileSync(timedConfig, readFileSync(configFile, "utf8").replace(/port: \d+/, `port: ${port}`));
  const started = performance.now();
  const child = spawn(process.execPath, [MAIN, "start", "--config", timedConfig], {
    cwd,
    stdio: ["ignore", "pipe", "pipe"],
  });
  const exited = new Promise((resolve) => child.once("exit", resolve));
  const ready = new Promise((resolve, reject) => {
    createInterface({ input: child.stdout }).on("line", (text) => {
      if (text.includes('"listening"')) resolve((performance.now() - started) / 1000);
    });
    child.once("exit", (code) => reject(new Error(`agentd start exited ${code} before listening`)));
  });
  ready.catch(() => undefined);
  let health;
  while (health === undefined) {
    try {
      const answer = await globalThis.fetch(`http://127.0.0.1:${port}/health`);
      if (answer.status !== 200) throw new Error(`/health answered ${answer.status}`);
      health = { seconds: (performance.now() - started) / 1000, status: (await answer.json()).status };
    } catch (error) {
      if (error.message?.startsWith("/health answered")) throw error;
      await new Promise((resolve) => globalThis.setTimeout(resolve, 2));
    }
  }
  const readySeconds = await ready;
  const status = (await (await globalThis.fetch(`http://127.0.0.1:${port}/health`)).json()).status;
  if (status !== "ok") throw new Error(`/health says ${status} once ready`);
  child.kill("SIGKILL");
  await exited;
  return { health: health.seconds, firstStatus: health.status, ready: readySeconds };
}

/** Spawns a server, reads its listening line, and times until its /health answers 200. */
async function timeToHealth(args, cwd) {
  const started = performance.now();
  const child = spawn(process.execPath, args, { cwd, stdio: ["ignore", "pipe", "pipe"] });
  const exited = new Promise((resolve) => child.once("exit", resolve));
  const url = await new Promise((resolve, reject) => {
    const lines = [child.stdout, child.stderr].map((stream) => createInterface({ input: stream }));
    for (const line of lines) {
      line.on("line", (text) => {
        if (!text.includes('"listening"')) return;
        try {
          resolve(JSON.parse(text.slice(text.indexOf("{"))).url);
        } catch {
          // Not the JSON line: keep reading.
        }
      });
    }
    child.once("exit", (code) => reject(new Error(`${args.join(" ")} exited ${code} before listening`)));
  });
  const health = await globalThis.fetch(`${url}/health`);
  const seconds = (performance.now() - started) / 1000;
  if (health.status !== 200) throw new Error(`/health answered ${health.status}`);
  child.kill("SIGKILL");
  await exited;
  return seconds;
}

/** Child process: starts a daemon on the project in-process and prints its heap after a full GC. */
async function reportHeap(configFile) {
  const { startDaemon } = await import(path.join(ROOT, "dist/app/daemon.js"));
  const { loadConfig } = await import(path.join(ROOT, "dist/config/load-config.js"));
  const { createLogger } = await import(path.join(ROOT, "dist/logging/logger.js"));
  const { config } = await loadConfig({ file: configFile });
  const logger = createLogger({ level: "silent", pretty: false });
  const daemon = await startDaemon({ config, version: "bench", overrides: { logger } });
  const scheduled = daemon.definitions
    .snapshot()
    .agents.filter((agent) => daemon.scheduler.nextFire(agent.id));
  for (let round = 0; round < 3; round++) globalThis.gc();
  console.log(JSON.stringify({ heapUsed: process.memoryUsage().heapUsed, scheduled: scheduled.length }));
  await daemon.shutdown();
}

function heapOf(configFile) {
  return new Promise((resolve, reject) => {
    const child = spawn(
      process.execPath,
      ["--expose-gc", fileURLToPath(import.meta.url), "--heap", configFile],
      {
        cwd: path.dirname(configFile),
        stdio: ["ignore", "pipe", "inherit"],
      },
    );
    let output = "";
    child.stdout.setEncoding("utf8").on("data", (chunk) => (output += chunk));
    child.once("exit", (code) => {
      const line = output.split("\n").find((text) => text.startsWith('{"heapUsed"'));
      if (code === 0 && line) resolve(JSON.parse(line));
      else reject(new Error(`heap measurement exited ${code}: ${output}`));
    });
  });
}

function median(values) {
  const sorted = [...values].sort((left, right) => left - right);
  return sorted[Math.floor(sorted.length / 2)];
}

async function main() {
  const scheduled = createProject(true);
  const unscheduled = createProject(false);
  const bareTimes = [];
  const daemonTimes = [];
  const restartTimes = [];
  const firstStatuses = new Set();
  // Alternating, so a change in the machine's load hits both sides alike. The first start of each
  // warms the file cache and is not counted (none in the quick mode, which checks that it runs).
  for (let round = QUICK ? 1 : 0; round <= STARTS; round++) {
    const bare = await timeToHealth([fileURLToPath(import.meta.url), "--bare"], ROOT);
    // A first start: a fresh data_dir, nothing parsed before.
    rmSync(path.join(scheduled.root, "data"), { recursive: true, force: true });
    const daemon = await timeDaemon(scheduled.configFile, scheduled.root);
    // A restart on the data_dir that start left (its parsed agents' cache included).
    const restart = await timeDaemon(scheduled.configFile, scheduled.root);
    if (round === 0) continue;
    bareTimes.push(bare);
    daemonTimes.push(daemon);
    restartTimes.push(restart);
    firstStatuses.add(daemon.firstStatus).add(restart.firstStatus);
  }
  const heapScheduled = await heapOf(scheduled.configFile);
  const heapUnscheduled = await heapOf(unscheduled.configFile);
  rmSync(scheduled.root, { recursive: true, force: true });
  rmSync(unscheduled.root, { recursive: true, force: true });

  const of = (times, key) => times.map((time) => time[key]);
  // Each start against the bare start just before it: the load of that moment hits both.
  const ratiosOf = (times) => {
    const ratios = times.map((seconds, index) => seconds / (bareTimes[index] ?? seconds));
    return `median ${median(ratios).toFixed(2)}x, min ${Math.min(...ratios).toFixed(2)}x, max ${Math.max(...ratios).toFixed(2)}x`;
  };
  const bytesPerAgent = (heapScheduled.heapUsed - heapUnscheduled.heapUsed) / AGENTS;
  const format = (seconds) => `${(seconds * 1000).toFixed(0)} ms`;
  const row = (label, times) =>
    console.log(`  ${label.padEnd(44)} ${format(median(times))}  (${times.map(format).join(", ")})`);
  const [loadAverage] = os.loadavg();
  console.log(
    `machine: ${os.cpus().length} cores, load average ${loadAverage?.toFixed(1)} (wall times grow when it exceeds the cores)`,
  );
  console.log(`cold start, median of ${STARTS} (each after one uncounted start):`);
  row("bare node + fastify, to GET /health", bareTimes);
  row(`agentd, ${AGENTS} scheduled agents, first start, to /health`, of(daemonTimes, "health"));
  row("  ... to ready (listening line, /health ok)", of(daemonTimes, "ready"));
  row("agentd, the same agents, restart, to /health", of(restartTimes, "health"));
  row("  ... to ready", of(restartTimes, "ready"));
  console.log(`/health's first answer said: ${[...firstStatuses].join(", ")}`);
  console.log(
    `ratio first start/bare: to /health ${ratiosOf(of(daemonTimes, "health"))}; to ready ${ratiosOf(of(daemonTimes, "ready"))}`,
  );
  console.log(
    `ratio restart/bare:     to /health ${ratiosOf(of(restartTimes, "health"))}; to ready ${ratiosOf(of(restartTimes, "ready"))}`,
  );
  const verdict = (seconds) => (seconds < TARGET_START_SECONDS ? "met" : "MISSED");
  console.log(
    `target agentd to /health < ${TARGET_START_SECONDS * 1000} ms: first start ${verdict(median(of(daemonTimes, "health")))}, ` +
      `restart ${verdict(median(of(restartTimes, "health")))} (to ready: ${verdict(median(of(daemonTimes, "ready")))}, ${verdict(median(of(restartTimes, "ready")))})`,
  );
  console.log(
    `heap after start: ${(heapScheduled.heapUsed / 1048576).toFixed(1)} MB with ${heapScheduled.scheduled} scheduled agents, ` +
      `${(heapUnscheduled.heapUsed / 1048576).toFixed(1)} MB with the same agents unscheduled`,
  );
  console.log(
    `bytes per idle scheduled agent: ${bytesPerAgent.toFixed(0)} ` +
      `(target < ${TARGET_BYTES_PER_AGENT}: ${bytesPerAgent < TARGET_BYTES_PER_AGENT ? "met" : "MISSED"})`,
  );
  if (heapScheduled.scheduled !== AGENTS) {
    console.error(`${AGENTS - heapScheduled.scheduled} agent(s) have no next fire`);
    process.exitCode = 1;
  }
}
