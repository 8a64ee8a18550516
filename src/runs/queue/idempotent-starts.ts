import type { RunRecord } from "../../run-vocabulary/run-record.js";
import type { RunRecords } from "../run-records.js";

/** How long an `Idempotency-Key` names its run: the same key of the same agent within it → that run. */
export const IDEMPOTENCY_WINDOW_MILLISECONDS = 24 * 60 * 60 * 1_000;

/** A run a start asked for, and whether it is one an earlier start with the same key made. */
export interface StartedRun {
  run: RunRecord;
  duplicate: boolean;
}

/**
 * Starts posted with an `Idempotency-Key` make one run per agent and key within
 * IDEMPOTENCY_WINDOW_MILLISECONDS: a key whose run is recorded answers that run; a key whose run is
 * being recorded right now (two requests at once on this node) waits for that run. Across the
 * nodes of a cluster the store decides (a unique index): the run it holds comes back from `create`.
 */
export class IdempotentStarts {
  readonly #store: RunRecords;
  readonly #now: () => Date;
  /** Agent and key → the start in flight. */
  readonly #inFlight = new Map<string, Promise<StartedRun>>();

  constructor(store: RunRecords, now: () => Date) {
    this.#store = store;
    this.#now = now;
  }

  /** The run of this key if one is recorded within the window. */
  recorded(agentId: string, key: string): RunRecord | undefined {
    return this.#withinWindow(this.#store.findByIdempotencyKey(agentId, key));
  }

  /**
   * `recorded` asked of the store itself: on a cluster, also a run another node made that this
   * one has not heard of yet. A round trip to the database: for a decision that must not miss it.
   */
  async stored(agentId: string, key: string): Promise<RunRecord | undefined> {
    return this.#withinWindow(await this.#store.readByIdempotencyKey(agentId, key));
  }

  #withinWindow(run: RunRecord | undefined): RunRecord | undefined {
    if (run === undefined) return undefined;
    const age = this.#now().getTime() - Date.parse(run.created_at);
    return age < IDEMPOTENCY_WINDOW_MILLISECONDS ? run : undefined;
  }

  /** The run of this key: recorded, being recorded, or made now by `create`. */
  async start(agentId: string, key: string, create: () => Promise<StartedRun>): Promise<StartedRun> {
    const recorded = this.recorded(agentId, key);
    if (recorded !== undefined) return { run: recorded, duplicate: true };
    const flightKey = `${agentId}\u0000${key}`;
    const inFlight = this.#inFlight.get(flightKey);
    if (inFlight !== undefined) return { run: (await inFlight).run, duplicate: true };
    const started = create();
    this.#inFlight.set(flightKey, started);
    try {
      return await started;
    } finally {
      this.#inFlight.delete(flightKey);
    }
  }
}
