import type { Clock } from "../clock/clock.js";
import type { Logger } from "../logging/logger.js";
import type { SharedTriggerStarts } from "./shared-trigger-starts.js";
import {
  DeliveryRateLimit,
  type RateLimit,
  type RateVerdict,
  type TriggerRateLimit,
  retryAfterSeconds,
} from "./delivery-rate-limit.js";

/** Starts taken by this node's own count while the store could not be reached are marked so. */
const LOCAL = "local:";

/**
 * A trigger's rate limit across a cluster (PostgreSQL store): every node counts the same starts in
 * the store, so N nodes behind a load balancer start at most `rate_limit.runs` runs per window
 * between them. While the store cannot be reached a node counts on its own (logged once per
 * outage): a webhook is never refused for the database's sake, and each node is then bounded by the
 * limit alone, as a lone daemon is.
 */
export class ClusterRateLimit implements TriggerRateLimit {
  readonly #starts: SharedTriggerStarts;
  readonly #clock: Clock;
  readonly #logger: Logger;
  readonly #local: DeliveryRateLimit;
  #unreachable = false;

  constructor(starts: SharedTriggerStarts, clock: Clock, logger: Logger) {
    this.#starts = starts;
    this.#clock = clock;
    this.#logger = logger;
    this.#local = new DeliveryRateLimit(clock);
  }

  async take(key: string, limit: RateLimit): Promise<RateVerdict> {
    const now = this.#clock.now();
    try {
      const verdict = await this.#starts.take(key, limit.runs, limit.per, new Date(now));
      if (this.#unreachable) {
        this.#unreachable = false;
        this.#logger.info("webhook rate limits are counted across the cluster again");
      }
      return verdict.taken
        ? { allowed: true, start: verdict.id }
        : { allowed: false, retryAfterSeconds: retryAfterSeconds(verdict.oldest.getTime(), limit, now) };
    } catch (error) {
      if (!this.#unreachable) {
        this.#unreachable = true;
        this.#logger.warn(
          { err: error },
          "could not count a webhook's start in the store; counting this node's starts alone meanwhile",
        );
      }
      return this.#local.takeNow(key, limit);
    }
  }

  async giveBack(key: string, start: string): Promise<void> {
    if (start.startsWith(LOCAL)) {
      await this.#local.giveBack(key, start);
      return;
    }
    await this.#starts.giveBack(start).catch((error: unknown) => {
      this.#logger.warn({ err: error, trigger: key }, "could not give back a webhook's start in the store");
    });
  }
}
