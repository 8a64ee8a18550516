import { performance } from "node:perf_hooks";

/**
 * Runs launched per tick at most. A launch goes on after the tick that made it (the worker lists
 * its tools, saves a checkpoint, builds its first model request and connects): that time is not in
 * the slice of launch-waiting.ts, so the count bounds it. Between ticks the event loop answers
 * requests.
 */
export const LAUNCHES_PER_TICK = 2;
/**
 * While new runs are being recorded (a burst of requests), launches wait so that the requests are
 * answered first, but no longer than this: past it, launches go on (a few per tick) however long
 * the stream of new runs lasts, so it does not starve the queue.
 */
const LAUNCH_HOLD_MILLISECONDS = 500;
/**
 * A new run recorded within this long of the one before continues a burst; from BURST_RUNS runs on,
 * launches wait until no new run came for this long (a record is written within a turn of the event
 * loop, so the runs of a burst are seldom being written at the same moment). A few runs created
 * together launch at once.
 */
const BURST_GAP_MILLISECONDS = 50;
const BURST_RUNS = 8;

/**
 * When launches may go on: in a later tick than the request that queued a run, and, while a burst
 * of new runs is being recorded, once it is over (LAUNCH_HOLD_MILLISECONDS at most): a burst of
 * requests is answered before its runs start. `dispatch` is the launch it paces.
 */
export class LaunchPacing {
  readonly #dispatch: () => void;
  #dispatchScheduled = false;
  /** New runs whose record is being written (start); launches wait while there are any. */
  #creating = 0;
  /** Since when launches have been held for runs being created. */
  #heldSince: number | undefined;
  /** When the last new run was recorded, and how many runs the burst it is part of has. */
  #lastCreated = Number.NEGATIVE_INFINITY;
  #burstRuns = 0;
  #burstTimer: NodeJS.Timeout | undefined;

  constructor(dispatch: () => void) {
    this.#dispatch = dispatch;
  }

  /** A new run's record is being written: launches wait for it. */
  creating(): void {
    this.#creating += 1;
  }

  /** A new run's record was written (or failed): the last of a burst releases the launches it held. */
  created(): void {
    this.#creating -= 1;
    const now = performance.now();
    this.#burstRuns = now - this.#lastCreated < BURST_GAP_MILLISECONDS ? this.#burstRuns + 1 : 1;
    this.#lastCreated = now;
    if (this.#creating === 0 && this.#heldSince !== undefined) this.soon();
  }

  /**
   * Whether launches wait now: a run is being recorded or a burst of new runs goes on, for less
   * than LAUNCH_HOLD_MILLISECONDS. Holding, it launches again once the burst is over.
   */
  holding(): boolean {
    const now = performance.now();
    const inBurst = this.#burstRuns >= BURST_RUNS && now - this.#lastCreated < BURST_GAP_MILLISECONDS;
    if (this.#creating > 0 || inBurst) {
      this.#heldSince ??= now;
      if (now - this.#heldSince < LAUNCH_HOLD_MILLISECONDS) {
        this.#dispatchAfterBurst();
        return true;
      }
    } else {
      this.#heldSince = undefined;
    }
    return false;
  }

  /** Launches queued runs the limits allow, in a later tick (once, however often it is asked). */
  soon(): void {
    if (this.#dispatchScheduled) return;
    this.#dispatchScheduled = true;
    setImmediate(() => {
      this.#dispatchScheduled = false;
      this.#dispatch();
    });
  }

  /** Launches queued runs once the burst of new runs under way is over (once, however often asked). */
  #dispatchAfterBurst(): void {
    if (this.#burstTimer !== undefined) return;
    this.#burstTimer = setTimeout(() => {
      this.#burstTimer = undefined;
      this.#dispatch();
    }, BURST_GAP_MILLISECONDS);
  }
}
