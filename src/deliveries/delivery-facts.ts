import type { DeliveryWhen } from "../config/delivery-settings.js";

/** What a delivery tells about a run: the template variables' sources, and a webhook's JSON. */
export interface DeliveryFacts {
  agent: string;
  run: string | null;
  /** The run's status when the delivery was made (`waiting` for a wait, `running` for `notify`). */
  status: string;
  reason?: string;
  /** Why this delivery was made. */
  when: DeliveryWhen;
  duration_ms?: number;
  cost_usd?: number;
  result?: string;
  error?: string;
  task?: string;
  /** The run in the dashboard. */
  link?: string;
  /** What the agent's `notify` said. */
  message?: string;
  /** What a waiting run waits for: the tool call to approve, or the question. */
  waiting_for?: string;
}

/** `12s`, `3m05s`, `1h02m`. */
export function formatElapsed(milliseconds: number): string {
  const seconds = Math.round(milliseconds / 1_000);
  if (seconds < 60) return `${seconds}s`;
  const minutes = Math.floor(seconds / 60);
  if (minutes < 60) return `${minutes}m${String(seconds % 60).padStart(2, "0")}s`;
  return `${Math.floor(minutes / 60)}h${String(minutes % 60).padStart(2, "0")}m`;
}

/** `$0.0123`. */
export function formatCost(costUsd: number): string {
  return `$${costUsd.toFixed(costUsd < 1 ? 4 : 2)}`;
}

/** The template variables of these facts, as text (absent facts are empty). */
export function templateValues(facts: DeliveryFacts): Record<string, string> {
  return {
    agent: facts.agent,
    run: facts.run ?? "",
    status: facts.status,
    reason: facts.reason ?? "",
    when: facts.when,
    duration: facts.duration_ms === undefined ? "" : formatElapsed(facts.duration_ms),
    cost: facts.cost_usd === undefined ? "" : formatCost(facts.cost_usd),
    result: facts.result ?? "",
    error: facts.error ?? "",
    task: facts.task ?? "",
    link: facts.link ?? "",
    message: facts.message ?? "",
    waiting_for: facts.waiting_for ?? "",
  };
}
