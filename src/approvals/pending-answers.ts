import { type Clock, systemClock } from "../clock/clock.js";

/** How one wait for a human ends when nobody answers in time or the run stops. */
export interface WaitEnding<Answer> {
  /** Milliseconds until `onExpiry` answers in the human's place. */
  timeoutMilliseconds: number;
  /** The run's signal: a stop ends the wait by rejecting with its reason. */
  signal: AbortSignal;
  /** The answer given at the timeout (and the place to publish that it expired). */
  onExpiry: () => Answer;
  /** Called when the run stops while waiting (publish that the wait ended). */
  onStop: () => void;
}

interface Pending<Entry, Answer> {
  entry: Entry;
  settle: (outcome: { answer: Answer } | { error: unknown }) => void;
}

/**
 * What the approval broker and the question broker share: requests parked under an id until a
 * human answers, the timeout answers, or the run stops. Timers never keep the process alive and are
 * cleared as soon as a request ends; every request ends exactly once.
 */
export class PendingAnswers<Entry, Answer> {
  readonly #pending = new Map<string, Pending<Entry, Answer>>();
  readonly #clock: Clock;

  /** `clock` runs the timeouts (default: the system clock). */
  constructor(clock: Clock = systemClock) {
    this.#clock = clock;
  }

  /** Parks `entry` under `id` until `answer(id, …)`, the timeout or a stop. */
  wait(id: string, entry: Entry, ending: WaitEnding<Answer>): Promise<Answer> {
    const { signal } = ending;
    if (signal.aborted) return Promise.reject(signal.reason as Error);
    return new Promise<Answer>((resolve, reject) => {
      const onAbort = () => {
        if (!this.#pending.delete(id)) return;
        ending.onStop();
        settle({ error: signal.reason });
      };
      const cancelTimer = this.#clock.setTimer(() => {
        if (!this.#pending.delete(id)) return;
        settle({ answer: ending.onExpiry() });
      }, ending.timeoutMilliseconds);
      const settle = (outcome: { answer: Answer } | { error: unknown }) => {
        cancelTimer();
        signal.removeEventListener("abort", onAbort);
        if ("error" in outcome) reject(outcome.error as Error);
        else resolve(outcome.answer);
      };
      signal.addEventListener("abort", onAbort, { once: true });
      this.#pending.set(id, { entry, settle });
    });
  }

  /** Ends the wait of `id` with `answer`; returns its entry, or undefined when it is not pending. */
  answer(id: string, answer: Answer): Entry | undefined {
    const pending = this.#pending.get(id);
    if (!pending) return undefined;
    this.#pending.delete(id);
    pending.settle({ answer });
    return pending.entry;
  }

  get(id: string): Entry | undefined {
    return this.#pending.get(id)?.entry;
  }

  /** The entries still waiting, oldest first. */
  entries(): Entry[] {
    return [...this.#pending.values()].map(({ entry }) => entry);
  }
}
