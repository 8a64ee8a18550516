import { performance } from "node:perf_hooks";
import type { LiveRun, LiveRuns } from "../live-runs.js";

/**
 * How long one tick may spend launching runs before the rest waits for the next tick: a guard for
 * launches slowed by the disk, the count (LAUNCHES_PER_TICK) being what bounds a tick. 20 launches
 * take a few ms of CPU; a wall-clock slice much shorter than 20 ms would cut the fires of one second
 * in two whenever the machine's load takes the core from the event loop mid-launch, and the second
 * part would start after the first part's answers are read.
 */
const DISPATCH_SLICE_MILLISECONDS = 20;

/**
 * Launches the runs waiting here that the limits allow, oldest first: the daemon-wide
 * `concurrency` (a sub-agent runs under its waiting parent's slot) and each agent's
 * `max_concurrent_runs`. Launching writes a record and starts a worker: past `perTick` runs
 * (LaunchPacing.perTick) or DISPATCH_SLICE_MILLISECONDS the rest waits for the next tick (`later`), so 100 runs starting
 * at once do not hold the event loop (and every API request) for the time of all of them. Returns
 * false when it left launchable runs for that later tick.
 */
export function launchWaiting(
  live: LiveRuns,
  concurrency: number,
  launch: (run: LiveRun) => void,
  later: () => void,
  perTick: number,
): boolean {
  const sliceEnd = performance.now() + DISPATCH_SLICE_MILLISECONDS;
  let launched = 0;
  for (const id of [...live.waiting]) {
    const run = live.get(id);
    if (!run) continue;
    // A sub-agent runs under its waiting parent's slot of the daemon-wide limit.
    if (!run.parentControl && live.inFlight.total >= concurrency) continue;
    const agentLimit = run.definition.limits.max_concurrent_runs;
    if (live.inFlight.of(run.record.agent) >= agentLimit) continue;
    if (launched >= perTick || performance.now() > sliceEnd) {
      later();
      return false;
    }
    live.dequeue(id);
    launch(run);
    launched += 1;
  }
  return true;
}
