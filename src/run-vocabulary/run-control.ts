import { type Clock, systemClock } from "../clock/clock.js";
import { AgentdError } from "../errors/agentd-error.js";
import type { RunReason } from "./run-status.js";

/** The reason a run's signal was aborted with: the run ends `stopped`/`failed` with this reason. */
export class RunAbort extends AgentdError {
  readonly reason: RunReason;
  constructor(reason: RunReason, message: string) {
    super("RUN_ABORTED", message, { details: { reason } });
    this.reason = reason;
  }
}

type PauseListener = (paused: boolean) => void;

/**
 * Why the run's timeout clock is stopped: time paused, waiting for an approval or waiting for the
 * store to have room again is not working time.
 */
export type ClockHold = "paused" | "waiting" | "storage" | "lease";

/**
 * What the daemon itself holds a run for, apart from a user's pause: its store is full
 * (`storage`), or this node's cluster lease is not known to hold (`lease`: it may have been taken
 * for dead, so it must not start a model call, a tool call or a CLI child it may not record).
 */
export type RunHold = "storage" | "lease";

/**
 * One run's node in the AbortSignal tree, plus pause. Its signal is aborted by stop(), by the
 * parent (daemon shutdown), and by the run's timeout — always with a RunAbort naming the reason.
 * The timeout counts working time only: its clock stops while the run is paused or waiting for an
 * approval (which the approval's own timeout bounds) and goes on with what was left.
 * Pause does not abort: workers call `waitWhilePaused()` before each model or tool call (the LLM
 * loop) or listen to `onPauseChange` (CLI workers send SIGSTOP/SIGCONT). A full store halts the
 * run the same way (`holdForStorage`), apart from a user's pause: each is lifted on its own, and
 * the run goes on once neither holds it.
 */
export class RunControl {
  readonly signal: AbortSignal;
  readonly #controller = new AbortController();
  readonly #pauseListeners = new Set<PauseListener>();
  #paused = false;
  readonly #holds = new Set<RunHold>();
  /** Whether this node's lease holds now (a cluster run): read before every step. */
  #leaseHeld: (() => boolean) | undefined;
  #resumeWaiters: Array<() => void> = [];
  /** The run's time: its timeout, and the watchdogs of what it runs (a CLI child's idle timeout). */
  readonly clock: Clock;
  /** Cancels the armed timeout; set while the timeout clock runs. */
  #cancelTimer: (() => void) | undefined;
  readonly #timeoutMilliseconds: number | undefined;
  /** Working time left before the timeout, as of `#clockStartedAt`. */
  #remainingMilliseconds = Number.POSITIVE_INFINITY;
  #clockStartedAt = 0;
  readonly #clockHolds = new Set<ClockHold>();
  #detachFromParent: (() => void) | undefined;

  /** `clock` measures working time and runs the timeout (default: the system clock). */
  constructor(options: { parent?: AbortSignal; timeoutMilliseconds?: number; clock?: Clock } = {}) {
    this.signal = this.#controller.signal;
    this.clock = options.clock ?? systemClock;
    const { parent, timeoutMilliseconds } = options;
    if (parent) {
      const fromParent = () =>
        this.stop(
          parent.reason instanceof RunAbort ? parent.reason.reason : "daemon_shutdown",
          parent.reason instanceof Error ? parent.reason.message : "the daemon is shutting down",
        );
      if (parent.aborted) fromParent();
      else {
        parent.addEventListener("abort", fromParent, { once: true, signal: this.signal });
        // A run that ends must not leave its listener on the daemon-wide signal.
        this.#detachFromParent = () => parent.removeEventListener("abort", fromParent);
      }
    }
    this.#timeoutMilliseconds =
      timeoutMilliseconds !== undefined && Number.isFinite(timeoutMilliseconds)
        ? timeoutMilliseconds
        : undefined;
    if (this.#timeoutMilliseconds !== undefined) {
      this.#remainingMilliseconds = this.#timeoutMilliseconds;
      this.#startClock();
    }
  }

  /** Working time left before the timeout (Infinity without one): bounds a sub-agent's run too. */
  remainingMilliseconds(): number {
    if (this.#cancelTimer === undefined) return this.#remainingMilliseconds;
    return Math.max(0, this.#remainingMilliseconds - (this.clock.now() - this.#clockStartedAt));
  }

  /** Stops the timeout clock for `hold` (several holds may overlap); the clock runs when none is left. */
  holdClock(hold: ClockHold): void {
    if (this.#clockHolds.has(hold)) return;
    this.#clockHolds.add(hold);
    this.#stopClock();
  }

  releaseClock(hold: ClockHold): void {
    if (!this.#clockHolds.delete(hold)) return;
    if (this.#clockHolds.size === 0 && !this.signal.aborted) this.#startClock();
  }

  /** Paused by a user (pause/resume). */
  get paused(): boolean {
    return this.#paused;
  }

  /**
   * Not to go on now: paused by a user, held while the store is full, or held while this node's
   * lease is not known to hold (read from the lease's deadline here, at once: a node waking from a
   * freeze is held before any timer of its own has run).
   */
  get halted(): boolean {
    if (this.#leaseHeld !== undefined && !this.#holds.has("lease") && !this.#leaseHeld()) this.hold("lease");
    return this.#paused || this.#holds.size > 0;
  }

  /**
   * Reads `held` before every step of the run (each model call, tool call and CLI start waits on
   * `halted`): while it says false the run is held for `lease` until `release("lease")`.
   */
  followLease(held: () => boolean): void {
    this.#leaseHeld = held;
  }

  /** Aborts the run's signal with `reason`. The first reason wins. */
  stop(reason: RunReason, message = `stopped: ${reason}`): void {
    if (this.signal.aborted) return;
    this.dispose();
    this.#controller.abort(new RunAbort(reason, message));
    this.#releaseWaiters();
  }

  pause(): boolean {
    if (this.#paused || this.signal.aborted) return false;
    const wasHalted = this.halted;
    this.#paused = true;
    this.holdClock("paused");
    if (!wasHalted) this.#tellPause(true);
    return true;
  }

  resume(): boolean {
    if (!this.#paused) return false;
    this.#paused = false;
    this.releaseClock("paused");
    if (!this.halted) this.#goOn();
    return true;
  }

  /** The store is full: the run halts at its next step (as if paused) until `releaseStorage`. */
  holdForStorage(): void {
    this.hold("storage");
  }

  /** The store has room again: the run goes on, unless a user paused it. */
  releaseStorage(): void {
    this.release("storage");
  }

  /** The run halts at its next step (as if paused) for `hold` until `release(hold)`. */
  hold(hold: RunHold): void {
    if (this.#holds.has(hold) || this.signal.aborted) return;
    const wasHalted = this.#paused || this.#holds.size > 0;
    this.#holds.add(hold);
    this.holdClock(hold);
    if (!wasHalted) this.#tellPause(true);
  }

  /** Lifts `hold`: the run goes on once nothing else holds it. */
  release(hold: RunHold): void {
    if (!this.#holds.delete(hold)) return;
    this.releaseClock(hold);
    if (!this.#paused && this.#holds.size === 0) this.#goOn();
  }

  /**
   * Resolves at once when running; while paused or held, once nothing holds the run.
   * Throws the RunAbort when stopped.
   */
  async waitWhilePaused(): Promise<void> {
    this.signal.throwIfAborted();
    while (this.halted) {
      await new Promise<void>((resolve) => this.#resumeWaiters.push(resolve));
      this.signal.throwIfAborted();
    }
  }

  onPauseChange(listener: PauseListener): () => void {
    this.#pauseListeners.add(listener);
    return () => this.#pauseListeners.delete(listener);
  }

  /** Clears the timeout and lets go of the parent signal; call when the run ends. */
  dispose(): void {
    this.#stopClock();
    this.#clockHolds.clear();
    this.#detachFromParent?.();
    this.#detachFromParent = undefined;
  }

  #startClock(): void {
    if (this.#cancelTimer !== undefined || this.#timeoutMilliseconds === undefined) return;
    const limit = this.#timeoutMilliseconds;
    this.#clockStartedAt = this.clock.now();
    this.#cancelTimer = this.clock.setTimer(
      () => this.stop("timeout", `the run passed its timeout of ${limit} ms of working time`),
      this.#remainingMilliseconds,
    );
  }

  #stopClock(): void {
    const cancel = this.#cancelTimer;
    if (cancel === undefined) return;
    this.#remainingMilliseconds = this.remainingMilliseconds();
    cancel();
    this.#cancelTimer = undefined;
  }

  #goOn(): void {
    this.#releaseWaiters();
    this.#tellPause(false);
  }

  #tellPause(paused: boolean): void {
    for (const listener of this.#pauseListeners) listener(paused);
  }

  #releaseWaiters(): void {
    const waiters = this.#resumeWaiters;
    this.#resumeWaiters = [];
    for (const resolve of waiters) resolve();
  }
}
