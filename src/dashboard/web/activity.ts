// The numbers of the cost and activity view, from the runs of the last 24 hours.

import type { RunRecord } from "./api-types.js";

export interface HourBucket {
  start: Date;
  runs: number;
  failed: number;
  tokens: number;
  cost: number;
}

export interface AgentActivity {
  agent: string;
  runs: number;
  failed: number;
  tokens: number;
  cost: number;
}

export interface ActivitySummary {
  total: number;
  tokens: number;
  cost: number;
  byStatus: Partial<Record<string, number>>;
  /** 24 hours, oldest first, the last one being the current hour. */
  hours: HourBucket[];
  /** Most expensive first. */
  agents: AgentActivity[];
}

const HOUR = 3_600_000;

export function summarizeActivity(runs: readonly RunRecord[], now: Date): ActivitySummary {
  const currentHour = Math.floor(now.getTime() / HOUR) * HOUR;
  const hours: HourBucket[] = Array.from({ length: 24 }, (_unused, index) => ({
    start: new Date(currentHour - (23 - index) * HOUR),
    runs: 0,
    failed: 0,
    tokens: 0,
    cost: 0,
  }));
  const byStatus: Partial<Record<string, number>> = {};
  const agents = new Map<string, AgentActivity>();
  let tokens = 0;
  let cost = 0;
  for (const run of runs) {
    const runTokens = run.usage.total_tokens ?? 0;
    const failed = run.status === "failed" ? 1 : 0;
    tokens += runTokens;
    cost += run.cost_usd;
    byStatus[run.status] = (byStatus[run.status] ?? 0) + 1;
    const bucket =
      hours[
        23 - Math.floor((currentHour - Math.floor(new Date(run.created_at).getTime() / HOUR) * HOUR) / HOUR)
      ];
    if (bucket) {
      bucket.runs += 1;
      bucket.failed += failed;
      bucket.tokens += runTokens;
      bucket.cost += run.cost_usd;
    }
    const agent = agents.get(run.agent) ?? { agent: run.agent, runs: 0, failed: 0, tokens: 0, cost: 0 };
    agent.runs += 1;
    agent.failed += failed;
    agent.tokens += runTokens;
    agent.cost += run.cost_usd;
    agents.set(run.agent, agent);
  }
  return {
    total: runs.length,
    tokens,
    cost,
    byStatus,
    hours,
    agents: [...agents.values()].sort((left, right) => right.cost - left.cost || right.runs - left.runs),
  };
}
