/** Runs in flight (running, paused or waiting), daemon-wide and per agent: O(1) limit checks. */
export class InFlightCounts {
  readonly #byAgent = new Map<string, number>();
  #total = 0;

  get total(): number {
    return this.#total;
  }

  of(agentId: string): number {
    return this.#byAgent.get(agentId) ?? 0;
  }

  /** Adds `delta` (1 when a run starts, -1 when it ends). */
  add(agentId: string, delta: number): void {
    const next = this.of(agentId) + delta;
    if (next <= 0) this.#byAgent.delete(agentId);
    else this.#byAgent.set(agentId, next);
    this.#total += delta;
  }
}
