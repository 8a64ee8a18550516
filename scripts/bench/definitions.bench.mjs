// Definitions benchmark: load time of 1,000 agents and 100 presets, and hot-reload latency.
// Each figure is printed with a baseline measured in the same run on the same files:
//   load   vs. plain readFile + gray-matter of the 1,000 agent files, without any validation;
//   reload vs. the raw fs.watch notification of the same kind of write.
// Targets: load of 1,000 agents < 1 s; reload median < 150 ms.
import { mkdirSync, mkdtempSync, rmSync, watch, writeFileSync } from "node:fs";
import { readFile } from "node:fs/promises";
import os, { tmpdir } from "node:os";
import path from "node:path";
import { performance } from "node:perf_hooks";
import { clearTimeout, setTimeout } from "node:timers";
import matter from "gray-matter";
import { ConfigSchema } from "../../dist/config/config-schema.js";
import { DefinitionRegistry } from "../../dist/definitions/definition-registry.js";
import { loadDefinitions } from "../../dist/definitions/load-definitions.js";
import { QUICK } from "./bench-daemon.mjs";

const AGENTS = QUICK ? 100 : 1_000;
const PRESETS = QUICK ? 10 : 100;
const LOAD_RUNS = QUICK ? 1 : 7;
const RELOAD_WRITES = QUICK ? 3 : 50;
const LOAD_TARGET_MILLISECONDS = 1_000;
const RELOAD_TARGET_MILLISECONDS = 150;

const root = mkdtempSync(path.join(tmpdir(), "agentd-bench-definitions-"));
const config = {
  ...ConfigSchema.parse({}),
  agents_dir: path.join(root, "agents"),
  presets_dir: path.join(root, "presets"),
  data_dir: path.join(root, "data"),
};

try {
  const [loadAverage] = os.loadavg();
  console.log(
    `machine: ${os.cpus().length} cores, load average ${loadAverage?.toFixed(1)} (wall times grow when it exceeds the cores)`,
  );
  const agentFiles = generateProject();
  console.log(
    `generated ${AGENTS} agents in 10 subfolders and ${PRESETS} presets (extends chains up to 10 deep)`,
  );

  const baselineLoad = await medianOf(LOAD_RUNS, async () => {
    await Promise.all(agentFiles.map(async (file) => matter(await readFile(file, "utf8"), {})));
  });
  const load = await medianOf(LOAD_RUNS, async () => {
    const snapshot = await loadDefinitions(config);
    const valid = snapshot.agents.filter((agent) => agent.valid).length;
    if (valid !== AGENTS) throw new Error(`expected ${AGENTS} valid agents, got ${valid}`);
  });
  globalThis.gc?.();
  const heapBefore = process.memoryUsage().heapUsed;
  const cpuBefore = process.cpuUsage();
  const startedAt = performance.now();
  const registry = await DefinitionRegistry.start(config);
  const cpuUsed = process.cpuUsage(cpuBefore);
  const registryStart = { wall: performance.now() - startedAt, cpu: (cpuUsed.user + cpuUsed.system) / 1000 };
  globalThis.gc?.();
  const heapMegabytes = (process.memoryUsage().heapUsed - heapBefore) / 1_048_576;

  console.log("\nload (median of %d runs)", LOAD_RUNS);
  row("baseline: readFile + gray-matter, no validation", baselineLoad);
  row("loadDefinitions: parse, validate, chains, prompts", load, baselineLoad);
  row("DefinitionRegistry.start (load + chokidar ready)", registryStart, baselineLoad);
  console.log(`  heap held by the registry: ${heapMegabytes.toFixed(1)} MB`);

  const baselineReload = await rawWatchLatencies(path.join(config.agents_dir, "team-0"));
  const reload = await reloadLatencies(registry, agentFiles);
  await registry.close();

  console.log("\nreload: write → new version served (%d writes)", RELOAD_WRITES);
  latencyRow("baseline: raw fs.watch notification", baselineReload);
  latencyRow("registry.get(id) serves the new version", reload, baselineReload);

  const loadOk = load.wall < LOAD_TARGET_MILLISECONDS;
  const reloadOk = percentile(reload, 50) < RELOAD_TARGET_MILLISECONDS;
  console.log("\ntargets");
  console.log(
    `  load ${AGENTS} agents < ${LOAD_TARGET_MILLISECONDS} ms: ${load.wall.toFixed(0)} ms ${loadOk ? "PASS" : "FAIL"}`,
  );
  console.log(
    `  reload median < ${RELOAD_TARGET_MILLISECONDS} ms: ${percentile(reload, 50).toFixed(1)} ms ${reloadOk ? "PASS" : "FAIL"}`,
  );
} finally {
  rmSync(root, { recursive: true, force: true });
}

/** 100 presets in chains of 10 (each extends the previous one) and 1,000 realistic agent files. */
function generateProject() {
  mkdirSync(config.presets_dir, { recursive: true });
  for (let index = 0; index < PRESETS; index++) {
    const parent = index % 10 === 0 ? "" : `extends: preset-${index - 1}\n`;
    writeFileSync(
      path.join(config.presets_dir, `preset-${index}.yaml`),
      `role: Expert ${index}\ndescription: Preset number ${index}\n${parent}critical_rules:\n` +
        `  - Rule ${index}.1 never guess\n  - Rule ${index}.2 cite sources\n` +
        `deliverable_templates:\n  - name: Report ${index}\n    template: |\n      ## Summary\n      ## Details\n` +
        `success_metrics:\n  - Metric ${index}\n`,
    );
  }
  const files = [];
  for (let index = 0; index < AGENTS; index++) {
    const file = path.join(config.agents_dir, `team-${index % 10}`, `agent-${index}.md`);
    mkdirSync(path.dirname(file), { recursive: true });
    writeFileSync(file, agentText(index, 0));
    files.push(file);
  }
  return files;
}

function agentText(index, version) {
  return `---
name: Agent ${index}
description: Benchmark agent ${index} version ${version}
preset: preset-${index % PRESETS}
worker: ${index % 3 === 0 ? "cli" : "llm"}
${index % 3 === 0 ? "cli:\n  tool: claude\n  args: [--model, sonnet]\n  idle_timeout: 5m\n" : ""}model: gpt-4o-mini
temperature: 0.2
tools: [read_file, write_file, shell, http_request]
permissions:
  allow: [read_file, "shell(git log*)"]
  ask: [write_file, shell]
  deny: ["shell(rm *)"]
secrets: [github_token]
schedule:
  cron: "${index % 60} 9 * * 1-5"
  timezone: Europe/Berlin
  task: Run number ${index}
limits:
  max_iterations: 20
  timeout: 5m
---
${"You are a careful agent. Read the sources, then write the report with the template.\n".repeat(20)}`;
}

async function reloadLatencies(registry, agentFiles) {
  const latencies = [];
  for (let write = 1; write <= RELOAD_WRITES; write++) {
    const index = (write * 37) % AGENTS;
    const id = `agent-${index}`;
    const expected = `Benchmark agent ${index} version ${write}`;
    const served = new Promise((resolve) => {
      const unsubscribe = registry.onChange(() => {
        if (registry.get(id)?.description !== expected) return;
        unsubscribe();
        resolve(performance.now());
      });
    });
    const startedAt = performance.now();
    writeFileSync(agentFiles[index], agentText(index, write));
    latencies.push((await withDeadline(served, id)) - startedAt);
  }
  return latencies;
}

async function rawWatchLatencies(directory) {
  const latencies = [];
  for (let write = 1; write <= RELOAD_WRITES; write++) {
    const name = `raw-${write}.txt`;
    const notified = new Promise((resolve) => {
      const watcher = watch(directory, (_event, fileName) => {
        if (fileName !== name) return;
        watcher.close();
        resolve(performance.now());
      });
    });
    const startedAt = performance.now();
    writeFileSync(path.join(directory, name), `write ${write}`);
    latencies.push((await withDeadline(notified, name)) - startedAt);
  }
  return latencies;
}

function withDeadline(promise, what) {
  let timer;
  const deadline = new Promise((_resolve, reject) => {
    timer = setTimeout(() => reject(new Error(`${what}: nothing within 10 s`)), 10_000);
  });
  return Promise.race([promise, deadline]).finally(() => clearTimeout(timer));
}

/** Median wall-clock and CPU milliseconds of `runs` runs (CPU time shows the cost on a busy machine). */
async function medianOf(runs, action) {
  const walls = [];
  const cpus = [];
  for (let run = 0; run < runs; run++) {
    globalThis.gc?.();
    const cpuBefore = process.cpuUsage();
    const startedAt = performance.now();
    await action();
    walls.push(performance.now() - startedAt);
    const cpu = process.cpuUsage(cpuBefore);
    cpus.push((cpu.user + cpu.system) / 1000);
  }
  return { wall: percentile(walls, 50), cpu: percentile(cpus, 50) };
}

function percentile(values, rank) {
  const sorted = [...values].sort((left, right) => left - right);
  return sorted[Math.min(sorted.length - 1, Math.floor((rank / 100) * sorted.length))] ?? Number.NaN;
}

function row(label, timing, baseline) {
  const ratio =
    baseline === undefined ? "" : `  (ratio ${(timing.wall / baseline.wall).toFixed(1)}× baseline)`;
  const cpu = timing.cpu === undefined ? "" : ` (cpu ${timing.cpu.toFixed(0).padStart(5)} ms)`;
  console.log(`  ${label.padEnd(50)} ${timing.wall.toFixed(1).padStart(8)} ms${cpu}${ratio}`);
}

function latencyRow(label, latencies, baseline) {
  const median = percentile(latencies, 50);
  const p95 = percentile(latencies, 95);
  const ratio =
    baseline === undefined
      ? ""
      : `  (ratio of medians ${(median / percentile(baseline, 50)).toFixed(1)}× baseline, +${(median - percentile(baseline, 50)).toFixed(1)} ms)`;
  console.log(
    `  ${label.padEnd(42)} median ${median.toFixed(1).padStart(6)} ms  p95 ${p95.toFixed(1).padStart(6)} ms${ratio}`,
  );
}
