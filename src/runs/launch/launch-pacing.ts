import { performance } from "node:perf_hooks";

/**
 * Runs launched per tick at most, and workers started per tick. A launch goes on after the tick
 * that made it (the worker lists its tools, builds its first model request and sends it): that time
 * is not in the slice of launch-waiting.ts, so the count bounds it (about 0.5 ms a run on an idle
 * machine, a few ms at load 10). Between ticks the event loop reads sockets: the answers of the runs
 * started in the tick before, and all the work they bring (their streams, checkpoints and ends). 20
 * is the fires of one second of issue 29 (20 agents due at once): their launches take one tick and
 * their workers the next, so all 20 first requests go out before any answer is read. At 10 a tick
 * the second ten started after a poll phase that read the first ten's answers: the event loop's
 * CPU from the fire to the 20th request was 21.6 ms against 15.8 at 20 (medians of five runs each,
 * load 11–16). The first request now waits for all 20 launches: 12.8 ms against 10.2.
 */
export const LAUNCHES_PER_TICK = 20;
/** Runs launched per tick while a burst of requests goes on (past the hold): its requests come first. */
export const BURST_LAUNCHES_PER_TICK = 2;
/**
 * While a stream of new runs is being recorded (a burst of requests), launches wait so that the
 * requests are answered first, but no longer than this: past it, launches go on (a few per tick)
 * however long the stream lasts, so it does not starve the queue.
 */
const LAUNCH_HOLD_MILLISECONDS = 500;
/**
 * A burst is a stream of requests: new runs recorded in BURST_TURNS turns of the event loop or
 * more, each within BURST_GAP_MILLISECONDS of the one before; launches then wait until no new run
 * came for that long. Runs recorded in one turn (the fires of one second, however many agents are
 * due in it, or a few requests read together) are no stream: they launch at once, a few per tick.
 */
const BURST_GAP_MILLISECONDS = 50;
const BURST_TURNS = 4;

/**
 * When launches may go on: in a later tick than the request that queued a run, and, while a burst
 * of requests records new runs turn after turn, once it is over (LAUNCH_HOLD_MILLISECONDS at most):
 * a burst of requests is answered before its runs start, while a scheduled run, a single request or
 * the fires due in the same second start at once. `dispatch` is the launch it paces; `now` the
 * monotonic time in milliseconds (performance.now unless a test gives its own).
 */
export class LaunchPacing {
  readonly #dispatch: () => void;
  #dispatchScheduled = false;
  /** New runs whose record is being written (start); launches wait while there are any. */
  #creating = 0;
  /** Since when launches have been held for runs being created. */
  #heldSince: number | undefined;
  /** When the last new run was recorded, and in how many turns the burst it is part of did. */
  #lastCreated = Number.NEGATIVE_INFINITY;
  #burstTurns = 0;
  /** Whether this turn of the event loop already counted in #burstTurns. */
  #turnCounted = false;
  #burstTimer: NodeJS.Timeout | undefined;
  readonly #now: () => number;

  constructor(dispatch: () => void, now: () => number = () => performance.now()) {
    this.#dispatch = dispatch;
    this.#now = now;
  }

  /** A new run's record is being written: launches wait for it. */
  creating(): void {
    this.#creating += 1;
  }

  /** A new run's record was written (or failed): the last of a burst releases the launches it held. */
  created(): void {
    this.#creating -= 1;
    const now = this.#now();
    if (!this.#turnCounted) {
      this.#turnCounted = true;
      // The check phase comes after the timers and the I/O of this turn: they count as one.
      setImmediate(() => {
        this.#turnCounted = false;
      });
      this.#burstTurns = now - this.#lastCreated < BURST_GAP_MILLISECONDS ? this.#burstTurns + 1 : 1;
    }
    this.#lastCreated = now;
    if (this.#creating === 0 && this.#heldSince !== undefined) this.soon();
  }

  /**
   * Whether launches wait now: a run is being recorded or a burst of requests goes on, for less
   * than LAUNCH_HOLD_MILLISECONDS. Holding, it launches again once the burst is over.
   */
  holding(): boolean {
    const now = this.#now();
    if (this.#creating > 0 || this.#inBurst(now)) {
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

  /** How many runs may launch (and how many workers start) in this tick. */
  perTick(): number {
    return this.#inBurst(this.#now()) ? BURST_LAUNCHES_PER_TICK : LAUNCHES_PER_TICK;
  }

  #inBurst(now: number): boolean {
    return this.#burstTurns >= BURST_TURNS && now - this.#lastCreated < BURST_GAP_MILLISECONDS;
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
