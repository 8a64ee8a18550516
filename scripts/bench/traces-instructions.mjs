// Instructions per round of the traces bench's mode processes, counted by valgrind (callgrind), not
// timed: a count does not move with the machine's load, so a change of a few µs a round to tracing
// shows where the traces bench's CPU ratio is noise. Each mode's process (traces.bench.mjs
// --role=mode, the same run, model server and sink) runs under callgrind with its counting off for
// TRACES_INSTRUCTIONS_WARMUP runs of 200 rounds (default 35: V8 is still optimizing the loop's
// largest functions past 4,000 rounds), then on for TRACES_INSTRUCTIONS_RUNS runs (default 3).
// Printed per round, by where the instructions ran: V8's optimizing compiler and garbage collector
// (both lumpy over three runs: compare the rest), then the rest, with JIT code named through node's
// --perf-basic-prof map (the OTLP serializer, the rest of OpenTelemetry, dist/telemetry, other
// JavaScript) and native code (V8's builtins and runtime, node, libc). Modes as in traces.bench.mjs
// (TRACES_INSTRUCTIONS_MODES, default "off,exporting"; also "non-recording", "discarding"), run
// side by side; TRACES_BENCH_DIST applies. Needs valgrind; takes minutes. Not a bench (run-all runs
// *.bench.mjs only): `node scripts/bench/traces-instructions.mjs`.
import { execFileSync, spawn } from "node:child_process";
import { once } from "node:events";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { URL, fileURLToPath } from "node:url";
import { startScriptedModel } from "./scripted-model-process.mjs";

const ROUNDS = 200;
const WARMUP = Number(process.env.TRACES_INSTRUCTIONS_WARMUP ?? 35);
const RUNS = Number(process.env.TRACES_INSTRUCTIONS_RUNS ?? 3);
const MODES = (process.env.TRACES_INSTRUCTIONS_MODES ?? "off,exporting").split(",");
const bench = fileURLToPath(new URL("./traces.bench.mjs", import.meta.url));

try {
  execFileSync("valgrind", ["--version"], { stdio: "ignore" });
} catch {
  console.error("traces-instructions needs valgrind's callgrind: install it (apt install valgrind)");
  process.exit(2);
}
const directory = mkdtempSync(path.join(tmpdir(), "traces-instructions-"));

const server = await startScriptedModel();
try {
  const counts = await Promise.all(MODES.map((mode) => countMode(mode)));
  const categories = [
    "V8 compiler",
    "V8 garbage collector",
    "JS: OTLP serializer and exporter",
    "JS: OpenTelemetry SDK and API",
    "JS: agentd telemetry",
    "JS: other",
    "V8 builtins",
    "V8 runtime, node, other native",
    "libc",
    "total",
    "total without compiler and GC",
  ];
  console.log(
    `instructions per round, ${RUNS} runs of ${ROUNDS} rounds after ${WARMUP} uncounted (callgrind files in ${directory})`,
  );
  console.log(`  ${"".padEnd(34)}${MODES.map((mode) => mode.padStart(15)).join("")}`);
  for (const category of categories)
    console.log(
      `  ${category.padEnd(34)}${counts.map((count) => format(count.get(category) ?? 0)).join("")}`,
    );
} finally {
  await server.close();
}

function format(instructions) {
  return Math.round(instructions / (RUNS * ROUNDS))
    .toLocaleString("en")
    .padStart(15);
}

/** One mode's process under callgrind: instructions of its counted runs, by category. */
async function countMode(mode) {
  const output = path.join(directory, `${mode.replaceAll(" ", "-")}.callgrind`);
  const child = spawn(
    "valgrind",
    [
      "--tool=callgrind",
      "--instr-atstart=no",
      "--smc-check=all-non-file",
      "--separate-threads=no",
      `--callgrind-out-file=${output}`,
      process.execPath,
      "--perf-basic-prof",
      bench,
      "--role=mode",
      `--mode=${mode}`,
      `--model-url=${server.modelUrl}`,
      `--sink-url=${server.sinkUrl}`,
    ],
    { stdio: ["ignore", "ignore", "ignore", "ipc"] },
  );
  await once(child, "message");
  const run = async () => {
    child.send({ rounds: ROUNDS });
    const [answer] = await once(child, "message");
    if (answer.error) throw new Error(`a ${mode} run failed: ${answer.error}`);
  };
  for (let index = 0; index < WARMUP; index += 1) await run();
  execFileSync("callgrind_control", ["--instr=on", String(child.pid)], { stdio: "ignore" });
  for (let index = 0; index < RUNS; index += 1) await run();
  execFileSync("callgrind_control", ["--dump", String(child.pid)], { stdio: "ignore" });
  execFileSync("callgrind_control", ["--instr=off", String(child.pid)], { stdio: "ignore" });
  child.disconnect();
  await once(child, "exit");
  // Valgrind runs node in its own process: node's perf map is named by that pid.
  const map = `/tmp/perf-${child.pid}.map`;
  const nameOf = codeMap(map);
  rmSync(map, { force: true });
  return categorize(`${output}.1`, nameOf);
}

/** Node's --perf-basic-prof map: JIT code ranges and the JavaScript function each holds. */
function codeMap(file) {
  const ranges = readFileSync(file, "utf8")
    .split("\n")
    .map((line) => line.split(" "))
    .filter((parts) => parts.length >= 3)
    .map(([start, size, ...name]) => ({
      start: Number.parseInt(start, 16),
      end: Number.parseInt(start, 16) + Number.parseInt(size, 16),
      name: name.join(" "),
    }))
    .sort((left, right) => left.start - right.start);
  return (address) => {
    let low = 0;
    let high = ranges.length - 1;
    while (low <= high) {
      const middle = (low + high) >> 1;
      if (ranges[middle].start <= address) low = middle + 1;
      else high = middle - 1;
    }
    const range = ranges[high];
    return range !== undefined && address < range.end ? range.name : undefined;
  };
}

/** Exclusive instructions per function (callgrind_annotate), summed by category. */
function categorize(file, nameOf) {
  const listing = execFileSync("callgrind_annotate", ["--inclusive=no", "--threshold=100", file], {
    encoding: "utf8",
    maxBuffer: 256 * 1024 * 1024,
  });
  const totals = new Map();
  for (const line of listing.split("\n")) {
    const match = /^\s*([\d,]+) \([^)]*\)\s+(\S.*)$/.exec(line);
    if (match === null || line.includes("PROGRAM TOTALS")) continue;
    const instructions = Number(match[1].replaceAll(",", ""));
    const category = categoryOf(match[2], nameOf);
    totals.set(category, (totals.get(category) ?? 0) + instructions);
    totals.set("total", (totals.get("total") ?? 0) + instructions);
  }
  totals.set(
    "total without compiler and GC",
    totals.get("total") - (totals.get("V8 compiler") ?? 0) - (totals.get("V8 garbage collector") ?? 0),
  );
  return totals;
}

function categoryOf(symbol, nameOf) {
  const jit = /\?\?\?:0x([0-9a-f]+)/.exec(symbol);
  if (jit !== null) {
    const name = nameOf(Number.parseInt(jit[1], 16)) ?? "";
    if (/@opentelemetry\/(otlp-|exporter-)/.test(name)) return "JS: OTLP serializer and exporter";
    if (name.includes("@opentelemetry/")) return "JS: OpenTelemetry SDK and API";
    if (name.includes("dist/telemetry/")) return "JS: agentd telemetry";
    return "JS: other";
  }
  if (/compiler::|Turbofan|turboshaft|[Mm]aglev|OptimizedCompilationJob/.test(symbol)) return "V8 compiler";
  if (
    /Scaveng|Mark|Sweep|Evacuat|heap::|BodyDescriptor|RememberedSet|MemoryChunk|Concurrent|SizeFromMap|RelocIterator|FreeList|LiveObject|StringTableCleaner|PointersUpdating|RecordMigrated|IterateObjectCache|VisitRelocInfo/.test(
      symbol,
    )
  )
    return "V8 garbage collector";
  if (symbol.includes("Builtins_")) return "V8 builtins";
  if (/libc|sysdeps|malloc/.test(symbol)) return "libc";
  return "V8 runtime, node, other native";
}
