import { isTerminal } from "../run-vocabulary/run-status.js";
import { targetsOf } from "./delivery-targets.js";
import { MAX_FINISHED_KEPT } from "./delivery-service.js";
import { MAX_DELIVERY_SPAN_MILLISECONDS } from "./retry-policy.js";
import { END_OCCASIONS, type RunDeliveriesOptions, deliverEnd } from "./run-deliveries.js";

/** Runs read at a start, newest first, when looking for ends not delivered. */
const RUNS_READ = 1_000;

/**
 * The run ends a daemon killed before it stored their deliveries left behind: a run's end is on
 * disk a moment before its deliveries are decided and stored, and a `kill -9` (a power cut) in
 * that moment would lose them for good. At a start, each run of this node that ended before it,
 * within the hour a delivery is retried, of an agent whose file is the one it ran with and has
 * end targets, and with no end delivery stored, is decided again — the same decision (`always`,
 * `failure`, `changed` read from the runs as they are), so a run whose decision made none makes
 * none again. Ends older than the oldest finished delivery kept, when some were pruned, are left
 * alone: their deliveries may be among those pruned. Resolves with how many runs got deliveries.
 */
export async function deliverMissedRunEnds(
  options: RunDeliveriesOptions,
  startedAt: number,
): Promise<number> {
  const kept = options.service
    .list()
    .filter((record) => record.status === "sent" || record.status === "failed");
  const prunedBefore =
    kept.length >= MAX_FINISHED_KEPT
      ? Math.min(...kept.map((record) => Date.parse(record.created_at)))
      : undefined;
  let decided = 0;
  for (const run of await options.runs.list({ limit: RUNS_READ })) {
    if (!isTerminal(run.status) || run.parent_run !== undefined || run.ended_at === undefined) continue;
    const ended = Date.parse(run.ended_at);
    // Ended since this start: its end is being delivered the usual way.
    if (ended >= startedAt || startedAt - ended > MAX_DELIVERY_SPAN_MILLISECONDS) continue;
    if (prunedBefore !== undefined && ended < prunedBefore) continue;
    if (options.node !== undefined && run.node !== undefined && run.node !== options.node) continue;
    // An agent file changed since may name other targets than the run had.
    const definition = options.definitionOf(run.agent);
    if (definition === undefined || definition.hash !== run.definition_hash) continue;
    const targets = targetsOf(definition.frontmatter.deliver, options.config);
    if (!targets.some(({ target }) => END_OCCASIONS.some((occasion) => target.when.includes(occasion))))
      continue;
    const { deliveries } = await options.service.page({ run: run.id, limit: 100 });
    if (deliveries.some((delivery) => END_OCCASIONS.includes(delivery.when))) continue;
    if ((await deliverEnd(options, run.id)) > 0) decided++;
  }
  if (decided > 0) {
    options.logger.warn(
      { runs: decided },
      "decided the deliveries of runs that ended just before the daemon before was killed",
    );
  } else {
    options.logger.info("no run ended undelivered before this start");
  }
  return decided;
}
