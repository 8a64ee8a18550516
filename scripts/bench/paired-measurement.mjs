// Paired measurement for the benches that compare agentd with a floor (a bare SDK, a bare route,
// memory off): the two sides run in interleaved pairs, the order swapped every other pair, so a
// drift of the machine's load falls on both alike; each run is timed in wall time and in CPU time,
// and the figure is the median of the per-pair ratios with its quartiles. Not a bench itself
// (run-all runs *.bench.mjs only).
//
//   const result = await measurePairs({
//     pairs: 15,
//     warmup: 1,
//     floor: () => plainLoop(ROUNDS),
//     subject: () => agentdRun(ROUNDS),
//   });
//   console.log(formatSide("bare SDK", result.floor, { units: ROUNDS, unit: "round" }));
//   console.log(formatSide("agentd", result.subject, { units: ROUNDS, unit: "round" }));
//   console.log(formatRatio("CPU ratio agentd / bare SDK", result.cpuRatios, { target: 1.05 }));
//
// A side whose CPU is spent in another process (a daemon, a bare server) returns
// `{ cpuMicroseconds }`, which replaces this process's CPU time for that run.
import { loadavg } from "node:os";
import { performance } from "node:perf_hooks";

/**
 * This process's CPU time so far (user + system), in microseconds.
 * @returns {number}
 */
export function cpuMicroseconds() {
  const { user, system } = process.cpuUsage();
  return user + system;
}

/**
 * Runs `action` once and measures it: wall time in milliseconds and CPU time in microseconds (this
 * process's, unless the action returns `{ cpuMicroseconds }` measured elsewhere). A full garbage
 * collection of this process comes first, unmeasured, unless `forceGc` is false.
 * @param {() => Promise<unknown>} action
 * @param {{ forceGc?: boolean }} [options]
 * @returns {Promise<{ wallMilliseconds: number, cpuMicroseconds: number, value: unknown }>}
 */
export async function measureOnce(action, { forceGc = true } = {}) {
  if (forceGc) globalThis.gc?.();
  const cpuBefore = cpuMicroseconds();
  const started = performance.now();
  const value = await action();
  const wallMilliseconds = performance.now() - started;
  const cpuUsed = cpuMicroseconds() - cpuBefore;
  const reported = value !== null && typeof value === "object" ? value.cpuMicroseconds : undefined;
  return {
    wallMilliseconds,
    cpuMicroseconds: typeof reported === "number" ? reported : cpuUsed,
    value,
  };
}

/**
 * Runs the floor and the subject in interleaved pairs (floor first in even pairs, subject first in
 * odd ones), after `warmup` unmeasured pairs, and returns each side's samples and the per-pair
 * ratios subject / floor, in wall time and in CPU time. `forceGc: false` when one side runs in
 * another process: a forced collection of this process before each run would clean up after this
 * process's side only, unmeasured, while the other side pays its collections inside its runs.
 * @param {{
 *   pairs: number,
 *   warmup?: number,
 *   floor: () => Promise<unknown>,
 *   subject: () => Promise<unknown>,
 *   forceGc?: boolean,
 * }} options
 * @returns {Promise<{
 *   floor: { wall: number[], cpu: number[] },
 *   subject: { wall: number[], cpu: number[] },
 *   wallRatios: number[],
 *   cpuRatios: number[],
 *   pairs: number,
 *   loadBefore: number,
 *   loadAfter: number,
 * }>}
 */
export async function measurePairs({ pairs, warmup = 1, floor, subject, forceGc = true }) {
  for (let index = 0; index < warmup; index += 1) {
    await floor();
    await subject();
  }
  const loadBefore = loadavg()[0];
  const sides = { floor: { wall: [], cpu: [] }, subject: { wall: [], cpu: [] } };
  const record = async (name, action) => {
    const sample = await measureOnce(action, { forceGc });
    sides[name].wall.push(sample.wallMilliseconds);
    sides[name].cpu.push(sample.cpuMicroseconds);
  };
  for (let index = 0; index < pairs; index += 1) {
    if (index % 2 === 0) {
      await record("floor", floor);
      await record("subject", subject);
    } else {
      await record("subject", subject);
      await record("floor", floor);
    }
  }
  return pairedResult(sides, pairs, loadBefore);
}

/**
 * measurePairs' shape, each pair's two runs started at the same moment instead of one after the
 * other: on a shared machine the load a run meets changes from second to second, and CPU time per
 * unit of work grows with it, so two runs side by side meet the same load where two in a row may
 * not. For sides whose work runs in processes of their own (each action returns
 * `{ cpuMicroseconds }`); no warm-up pairs.
 * @param {{ pairs: number, floor: () => Promise<{ cpuMicroseconds: number }>, subject: () => Promise<{ cpuMicroseconds: number }> }} options
 */
export async function measurePairsTogether({ pairs, floor, subject }) {
  const loadBefore = loadavg()[0];
  const sides = { floor: { wall: [], cpu: [] }, subject: { wall: [], cpu: [] } };
  const timed = async (name, action) => {
    const started = performance.now();
    const { cpuMicroseconds: cpu } = await action();
    return { name, wall: performance.now() - started, cpu };
  };
  for (let index = 0; index < pairs; index += 1) {
    // Which side's run is asked first alternates, as measurePairs alternates the order.
    const first = index % 2 === 0 ? ["floor", floor] : ["subject", subject];
    const second = index % 2 === 0 ? ["subject", subject] : ["floor", floor];
    for (const sample of await Promise.all([timed(...first), timed(...second)])) {
      sides[sample.name].wall.push(sample.wall);
      sides[sample.name].cpu.push(sample.cpu);
    }
  }
  return pairedResult(sides, pairs, loadBefore);
}

/** Both sides' samples with the per-pair ratios subject / floor, and the load around them. */
function pairedResult(sides, pairs, loadBefore) {
  const ratiosOf = (key) =>
    sides.subject[key].map((value, index) => value / Math.max(Number.EPSILON, sides.floor[key][index]));
  return {
    ...sides,
    wallRatios: ratiosOf("wall"),
    cpuRatios: ratiosOf("cpu"),
    pairs,
    loadBefore,
    loadAfter: loadavg()[0],
  };
}

/**
 * The median, quartiles and extremes of a list of numbers (the quartiles by nearest rank).
 * @param {number[]} values
 * @returns {{ median: number, low: number, high: number, min: number, max: number, count: number }}
 */
export function quartiles(values) {
  const sorted = [...values].sort((left, right) => left - right);
  const at = (quantile) => sorted[Math.min(sorted.length - 1, Math.floor(quantile * sorted.length))];
  return {
    median: at(0.5),
    low: at(0.25),
    high: at(0.75),
    min: sorted[0],
    max: sorted.at(-1),
    count: sorted.length,
  };
}

/**
 * One side's line: wall and CPU medians with quartiles, per unit when `units` is given (e.g. the
 * rounds of one run): `bare SDK  wall 412 µs/round (quartiles 398–430), CPU 380 µs/round (…)`.
 * @param {string} label
 * @param {{ wall: number[], cpu: number[] }} samples
 * @param {{ units?: number, unit?: string, width?: number }} [options]
 * @returns {string}
 */
export function formatSide(label, samples, { units = 1, unit = "run", width = 24 } = {}) {
  const perUnit = (values, scale) => quartiles(values.map((value) => (value * scale) / units));
  const wall = perUnit(samples.wall, 1_000);
  const cpu = perUnit(samples.cpu, 1);
  const figure = ({ median, low, high }) =>
    `${median.toFixed(0)} µs/${unit} (quartiles ${low.toFixed(0)}–${high.toFixed(0)})`;
  return `  ${label.padEnd(width)} wall ${figure(wall)}, CPU ${figure(cpu)}`;
}

/**
 * A ratio line (it holds the word `ratio`, which bench-docs collects): the median of the per-pair
 * ratios with quartiles, range and count, and the verdict against `target` when given:
 * `CPU ratio agentd / bare SDK 1.031 (quartiles 0.994–1.062, range 0.95–1.20, 15 pairs; target ≤ 1.05) ok`.
 * @param {string} label
 * @param {number[]} ratios
 * @param {{ target?: number, digits?: number }} [options]
 * @returns {string}
 */
export function formatRatio(label, ratios, { target, digits = 3 } = {}) {
  const { median, low, high, min, max, count } = quartiles(ratios);
  const spread = `quartiles ${low.toFixed(digits)}–${high.toFixed(digits)}, range ${min.toFixed(2)}–${max.toFixed(2)}, ${count} pairs`;
  const verdict =
    target === undefined ? "" : `; target ≤ ${target}) ${median <= target ? "ok" : "OVER TARGET"}`;
  return `${label} ${median.toFixed(digits)} (${spread}${verdict === "" ? ")" : verdict}`;
}

/**
 * The load line every bench prints: `load average 2.51 → 3.02 (1 min), 2 cores`.
 * @param {{ loadBefore: number, loadAfter: number }} result
 * @param {number} cores
 * @returns {string}
 */
export function formatLoad({ loadBefore, loadAfter }, cores) {
  return `load average ${loadBefore.toFixed(2)} → ${loadAfter.toFixed(2)} (1 min), ${cores} cores`;
}
