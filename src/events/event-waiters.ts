import { type Clock, systemClock } from "../clock/clock.js";

interface Waiter {
  after: number;
  release: () => void;
}

/**
 * Long-poll waiters, per agent: each is released by the first event with an id above its cursor,
 * by its timeout, or by its signal (the client went away), whichever comes first.
 */
export class EventWaiters {
  readonly #byAgent = new Map<string, Set<Waiter>>();
  readonly #clock: Clock;

  /** `clock` runs the timeouts (default: the system clock). */
  constructor(clock: Clock = systemClock) {
    this.#clock = clock;
  }

  /** Resolves when `notify(agent, id > after)` is called, after `milliseconds`, or on abort. */
  wait(agent: string, after: number, milliseconds: number, signal?: AbortSignal): Promise<void> {
    if (signal?.aborted || milliseconds <= 0) return Promise.resolve();
    return new Promise((resolve) => {
      let waiters = this.#byAgent.get(agent);
      if (!waiters) {
        waiters = new Set();
        this.#byAgent.set(agent, waiters);
      }
      const cancelTimer = this.#clock.setTimer(() => waiter.release(), milliseconds);
      const waiter: Waiter = {
        after,
        release: () => {
          cancelTimer();
          signal?.removeEventListener("abort", waiter.release);
          const set = this.#byAgent.get(agent);
          set?.delete(waiter);
          if (set?.size === 0) this.#byAgent.delete(agent);
          resolve();
        },
      };
      waiters.add(waiter);
      signal?.addEventListener("abort", waiter.release, { once: true });
    });
  }

  /** Releases the agent's waiters whose cursor is below `id`. */
  notify(agent: string, id: number): void {
    const waiters = this.#byAgent.get(agent);
    if (!waiters) return;
    for (const waiter of [...waiters]) if (id > waiter.after) waiter.release();
  }

  /** Releases every waiter (shutdown). */
  releaseAll(): void {
    for (const waiters of [...this.#byAgent.values()]) for (const waiter of [...waiters]) waiter.release();
  }

  /** Number of pending waiters (all agents). */
  get pending(): number {
    let count = 0;
    for (const waiters of this.#byAgent.values()) count += waiters.size;
    return count;
  }
}
