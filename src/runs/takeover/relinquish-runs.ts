import type { RunLife } from "../run-life.js";

/**
 * Runs this node no longer holds (a cluster took it for dead and took its runs, or another node
 * holds the run now), with their sub-agents' runs: their workers are stopped, and nothing more of
 * them is recorded or published here (their holder ends them or runs them again); their slots go
 * to other runs. Returns the ids let go.
 */
export function relinquishRuns(life: RunLife, ids: readonly string[] | "all", why: string): string[] {
  const { live } = life;
  const chosen = ids === "all" ? live.ids() : ids.filter((id) => live.has(id));
  const family = new Set(chosen.flatMap((id) => [id, ...live.descendantsOf(id)]));
  for (const id of family) {
    const run = live.get(id);
    if (!run) continue;
    live.delete(id);
    live.dequeue(id);
    if (run.control) {
      live.inFlight.add(run.record.agent, -1);
      run.control.stop("crashed", why);
    }
  }
  if (family.size > 0) {
    life.options.logger.warn({ runs: [...family] }, `runs stopped here without a record: ${why}`);
    life.dispatch();
    life.notifyIdleWhenSettled();
  }
  return [...family];
}
