/** What a cluster's store answers for one start of a trigger: taken (its id), or refused. */
export type SharedStartVerdict = { taken: true; id: string } | { taken: false; oldest: Date };

/**
 * Webhook triggers' starts counted across a cluster (PostgreSQL store): each start a row, so every
 * node sees the same window; taking one is serialised per trigger, never two past the limit.
 */
export interface SharedTriggerStarts {
  /**
   * Takes one start of `key` at `now` if fewer than `runs` were taken after `now - perMilliseconds`;
   * else answers the oldest start in the window. Starts older than the window are deleted.
   */
  take(key: string, runs: number, perMilliseconds: number, now: Date): Promise<SharedStartVerdict>;
  /** Deletes a start taken for a run that was not made. */
  giveBack(id: string): Promise<void>;
}
