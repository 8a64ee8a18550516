/**
 * How much run history is kept: runs older than `days`, and beyond the newest `runsPerAgent` of
 * each agent, are pruned with their logs and checkpoints. `null` keeps without that bound. Config
 * `retention: { days, runs_per_agent }` sets the default; an agent file's `retention:` overrides it
 * key by key. Unfinished runs are never pruned.
 */
export interface RetentionPolicy {
  days: number | null;
  runsPerAgent: number | null;
}

/** Generous but finite: a quarter of a year, and ten thousand runs of each agent. */
export const DEFAULT_RETENTION: RetentionPolicy = { days: 90, runsPerAgent: 10_000 };

/** The policy of one agent: its own keys where it sets them, else the configured default. */
export function retentionOf(
  configured: RetentionPolicy,
  agentOverride: Partial<RetentionPolicy> | undefined,
): RetentionPolicy {
  return {
    days: agentOverride?.days !== undefined ? agentOverride.days : configured.days,
    runsPerAgent:
      agentOverride?.runsPerAgent !== undefined ? agentOverride.runsPerAgent : configured.runsPerAgent,
  };
}

/**
 * Whether a finished run is past its agent's policy: created more than `days` before `now`, or
 * beyond the newest `runsPerAgent` of its agent (`rank` 1 is the agent's newest run).
 */
export function isPastRetention(
  policy: RetentionPolicy,
  run: { created_at: string },
  rank: number,
  now: Date,
): boolean {
  if (policy.runsPerAgent !== null && rank > policy.runsPerAgent) return true;
  if (policy.days === null) return false;
  return Date.parse(run.created_at) < now.getTime() - policy.days * 86_400_000;
}
