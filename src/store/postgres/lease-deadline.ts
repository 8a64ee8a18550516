/**
 * The share of the lease a node counts on after a renewal: the database's lease runs from when it
 * executed the renewal, this node's from when it sent it, and a tenth more is left for the two
 * clocks' rates to differ. A node stops starting work before the database can call it dead.
 */
const USABLE_SHARE_OF_LEASE = 0.9;

/**
 * This node's own view of its cluster lease, on a monotonic clock: it holds until the usable share
 * of the lease has passed since the last renewal that succeeded was *sent* (not when its answer
 * came: a renewal answered late was executed at some point in between, and the database's lease
 * runs from then). Read synchronously before each step, so a node that wakes from a freeze knows
 * at once that its lease may be gone, before any timer or answer of its own has run.
 */
export class LeaseDeadline {
  readonly #usableMilliseconds: number;
  readonly #now: () => number;
  /** Monotonic time until which the lease holds; -Infinity before the first renewal. */
  #until = Number.NEGATIVE_INFINITY;

  /** `now`: a monotonic clock in milliseconds (performance.now, or a test's clock). */
  constructor(leaseMilliseconds: number, now: () => number) {
    this.#usableMilliseconds = Math.floor(leaseMilliseconds * USABLE_SHARE_OF_LEASE);
    this.#now = now;
  }

  /** The current monotonic time, to pass back to `renewed` once the renewal sent now succeeds. */
  sending(): number {
    return this.#now();
  }

  /** A renewal sent at `sentAt` (from `sending`) succeeded: the lease holds until its usable share has passed. */
  renewed(sentAt: number): void {
    this.#until = Math.max(this.#until, sentAt + this.#usableMilliseconds);
  }

  /** Whether the lease holds now. */
  held(): boolean {
    return this.#now() < this.#until;
  }

  /** Milliseconds until the lease stops holding (0 once it has). */
  remaining(): number {
    return Math.max(0, this.#until - this.#now());
  }

  /** The lease is gone (the node found its row deleted): it holds again only after a renewal. */
  lapse(): void {
    this.#until = Number.NEGATIVE_INFINITY;
  }
}
