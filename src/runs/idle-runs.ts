import { IdleWaiters } from "./idle-waiters.js";
import type { LiveRuns } from "./live-runs.js";
import type { OrderedPublications } from "./ordered-publications.js";

/** Whether this node is idle: no run held here, and every status change on disk and published. */
export class IdleRuns {
  readonly #live: LiveRuns;
  readonly #publications: OrderedPublications;
  readonly #waiters = new IdleWaiters();

  constructor(live: LiveRuns, publications: OrderedPublications) {
    this.#live = live;
    this.#publications = publications;
  }

  /** Resolves true once idle, or false when `timeoutMilliseconds` passes first. */
  wait(timeoutMilliseconds: number): Promise<boolean> {
    const idle = this.#live.size === 0 && this.#publications.waiting === 0;
    return this.#waiters.wait(idle, timeoutMilliseconds);
  }

  /** Tells the waiters once no run is in flight and the last status changes are published. */
  notifyWhenSettled(): void {
    if (this.#live.size > 0) return;
    void this.#publications.settled().then(() => {
      if (this.#live.size === 0) this.#waiters.notifyIdle();
    });
  }
}
