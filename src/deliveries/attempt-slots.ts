/** Attempts under way at once to one target: a receiver is never sent more than this in parallel. */
export const MAX_ATTEMPTS_PER_TARGET = 4;
/** Attempts under way at once in all: the daemon's own sockets and memory stay bounded. */
export const MAX_ATTEMPTS = 32;

interface Waiting {
  key: string;
  start: () => void;
}

/**
 * Slots for delivery attempts: at most MAX_ATTEMPTS_PER_TARGET per target and MAX_ATTEMPTS in all.
 * Hundreds of deliveries due at once (a daemon restarted after a receiver's outage, a burst of
 * runs ending together) would otherwise open hundreds of connections to one SMTP server or chat
 * at the same moment, which refuses them (too many connections, rate limits) and turns one
 * outage into hundreds of retries. Attempts wait in the order they came; one waiting for a busy
 * target never holds up another target's.
 */
export class AttemptSlots {
  readonly #perTarget: number;
  readonly #total: number;
  readonly #busy = new Map<string, number>();
  readonly #waiting: Waiting[] = [];
  #running = 0;

  constructor(perTarget = MAX_ATTEMPTS_PER_TARGET, total = MAX_ATTEMPTS) {
    this.#perTarget = perTarget;
    this.#total = total;
  }

  /** Runs `attempt` once `target` and the whole have a free slot, and frees it when it settles. */
  async run<Result>(target: string, attempt: () => Promise<Result>): Promise<Result> {
    if (this.#hasRoom(target) && !this.#waiting.some((waiting) => waiting.key === target)) {
      this.#take(target);
    } else {
      await new Promise<void>((start) => this.#waiting.push({ key: target, start }));
    }
    try {
      return await attempt();
    } finally {
      this.#free(target);
    }
  }

  #hasRoom(target: string): boolean {
    return this.#running < this.#total && (this.#busy.get(target) ?? 0) < this.#perTarget;
  }

  #take(target: string): void {
    this.#running++;
    this.#busy.set(target, (this.#busy.get(target) ?? 0) + 1);
  }

  #free(target: string): void {
    this.#running--;
    const left = (this.#busy.get(target) ?? 1) - 1;
    if (left === 0) this.#busy.delete(target);
    else this.#busy.set(target, left);
    for (let index = 0; index < this.#waiting.length && this.#running < this.#total;) {
      const waiting = this.#waiting[index];
      if (waiting !== undefined && this.#hasRoom(waiting.key)) {
        this.#waiting.splice(index, 1);
        this.#take(waiting.key);
        waiting.start();
      } else {
        index++;
      }
    }
  }
}
