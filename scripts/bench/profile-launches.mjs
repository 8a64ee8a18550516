// Reads the CPU profiles cron-lateness writes with --cpu-prof-dir and, for the samples between each
// second's fire and its last model request only (the `.windows.json` beside each profile), prints
// where the event loop's CPU went (samples counted, 200 µs each): by the innermost agentd frame on the stack (dist/, not
// node_modules: which of agentd's steps paid for it) and by self time, per launch.
// Usage: node scripts/bench/profile-launches.mjs <dir> [rows] [--to-first]
import { readFileSync, readdirSync } from "node:fs";
import path from "node:path";

const directory = process.argv[2];
const rows = Number(process.argv[3] ?? 30);
/** `--to-first`: from the fire to the second's first model request only (the creations and launches). */
const toFirst = process.argv.includes("--to-first");
const byOwner = new Map();
const byStep = new Map();
/** A launch's steps, by the folder (or file) of the innermost agentd frame; the first match wins. */
const STEPS = [
  ["the record file (util/replace-file, latest-file-writes)", /util\/(replace-file|latest-file-writes)/],
  [
    "run logs and event appends (src/events, whole-append, grouped-append)",
    /events\/|util\/(whole|grouped)-append/,
  ],
  ["the model request and the answers read (src/llm)", /llm\//],
  [
    "the SDK and undici with no agentd frame (their callbacks)",
    /openai\/|dispatcher\/|core\/|internal\/headers|decoders\/|utils\/log|writev/,
  ],
  ["the LLM worker (src/workers)", /workers\//],
  ["checkpoints", /checkpoints\//],
  ["launch, RunControl, records (src/runs, run-vocabulary)", /runs\/|run-vocabulary\//],
  ["the scheduler", /scheduler\//],
  ["the API and metrics", /api\/|metrics\//],
  ["garbage collector", /\(garbage collector\)/],
];
const bySelf = new Map();
let total = 0;
let launches = 0;
let windowCount = 0;

const add = (map, key, microseconds) => map.set(key, (map.get(key) ?? 0) + microseconds);

for (const name of readdirSync(directory).filter((file) => file.endsWith(".cpuprofile"))) {
  const profile = JSON.parse(readFileSync(path.join(directory, name), "utf8"));
  const windowsFile = path.join(directory, name.replace(/\.cpuprofile$/, ".windows.json"));
  const windows = JSON.parse(readFileSync(windowsFile, "utf8")).filter((window) => window.requests >= 20);
  windowCount += windows.length;
  launches += windows.reduce((sum, window) => sum + window.requests, 0);
  const nodes = new Map(profile.nodes.map((node) => [node.id, node]));
  const parents = new Map();
  for (const node of profile.nodes) for (const child of node.children ?? []) parents.set(child, node.id);
  const label = (node) => {
    const { functionName, url, lineNumber } = node.callFrame;
    const file = url.includes("/dist/")
      ? url.slice(url.indexOf("/dist/") + 6)
      : url.split("/").slice(-2).join("/");
    return `${functionName || "(anonymous)"} ${file}:${lineNumber + 1}`;
  };
  const owner = (id) => {
    for (let current = id; current !== undefined; current = parents.get(current)) {
      const node = nodes.get(current);
      const { url } = node.callFrame;
      if (url.includes("/dist/") && !url.includes("node_modules")) return label(node);
    }
    return `(no agentd frame) ${label(nodes.get(id))}`;
  };
  let time = profile.startTime;
  const interval = 200;
  profile.samples.forEach((sample, index) => {
    time += profile.timeDeltas[index];
    // Counted as one interval each, not by the time to the next sample: a thread waiting for a core
    // takes its pending sample when it runs again, so the gaps measure the machine, the count the CPU.
    const delta = interval;
    if (!windows.some((window) => time >= window.fire && time <= (toFirst ? window.first : window.last)))
      return;
    const node = nodes.get(sample);
    if (node.callFrame.functionName === "(idle)") return;
    total += delta;
    add(bySelf, label(node), delta);
    const ownerLabel = owner(sample);
    add(byOwner, ownerLabel, delta);
    add(
      byStep,
      STEPS.find(([, pattern]) => pattern.test(ownerLabel))?.[0] ?? "other (microtasks, the program, ...)",
      delta,
    );
  });
}

const print = (title, map) => {
  console.log(`\n${title}`);
  for (const [key, microseconds] of [...map].sort((left, right) => right[1] - left[1]).slice(0, rows))
    console.log(
      `${((microseconds / total) * 100).toFixed(1).padStart(5)} %  ${(microseconds / launches).toFixed(0).padStart(5)} µs/launch  ${key}`,
    );
};
console.log(
  `${windowCount} seconds, ${launches} launches: ${(total / 1000).toFixed(1)} ms busy in the windows, ` +
    `${(total / launches).toFixed(0)} µs a launch (fire to the second's last request)`,
);
print("by step (innermost agentd frame's folder)", byStep);
print("by innermost agentd frame", byOwner);
print("by self time", bySelf);
