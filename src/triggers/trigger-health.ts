import type { Clock } from "../clock/clock.js";
import type { TriggerKind } from "./task-template.js";

/**
 * What became of one delivery, upstream end or change a trigger saw: a run `accepted` (started),
 * `refused` (a bad signature or body, an `after` that would loop), a `duplicate` of one that started
 * a run, `rate_limited`, `skipped` by the filter, or `failed` (the run could not be started).
 */
export const TRIGGER_OUTCOMES = [
  "accepted",
  "refused",
  "duplicate",
  "rate_limited",
  "skipped",
  "failed",
] as const;
export type TriggerOutcome = (typeof TRIGGER_OUTCOMES)[number];

/** One trigger's health as `GET /triggers` serves it. */
export interface TriggerHealthEntry {
  /** When it last started a run (ISO), or null. */
  last_fired_at: string | null;
  last_outcome: TriggerOutcome | null;
  last_outcome_at: string | null;
  counts: Record<TriggerOutcome, number>;
  /** The last refusal or failure's message, masked like every message; null once none happened. */
  last_error: string | null;
}

/** The most errors' characters kept: enough to tell what went wrong, never a whole payload. */
const MAX_ERROR_CHARS = 500;

/**
 * Every trigger's health on this daemon since it started (SPEC 10: the dashboard and the CLI show
 * it): counts by outcome, the last outcome and when, the last run started and the last error.
 * Kept only for triggers that exist (an unknown name of a stranger's request is never counted), in
 * memory: a restart starts the counts again.
 */
export class TriggerHealth {
  readonly #clock: Clock;
  readonly #redact: (text: string) => string;
  readonly #entries = new Map<string, TriggerHealthEntry>();

  /** `redact` masks the vault's values in an error, before it is cut (the redactor's `redactText`). */
  constructor(clock: Clock, redact: (text: string) => string = (text) => text) {
    this.#clock = clock;
    this.#redact = redact;
  }

  /** Counts one outcome of the trigger `name` of `agent`. */
  record(agent: string, name: string, outcome: TriggerOutcome, error?: string): void {
    const key = keyOf(agent, name);
    const entry = this.#entries.get(key) ?? emptyEntry();
    const at = new Date(this.#clock.now()).toISOString();
    entry.counts[outcome]++;
    entry.last_outcome = outcome;
    entry.last_outcome_at = at;
    if (outcome === "accepted") entry.last_fired_at = at;
    // Masked whole, then cut: a value the cut fell inside would keep its first part.
    if (error !== undefined) entry.last_error = this.#redact(error).slice(0, MAX_ERROR_CHARS);
    this.#entries.set(key, entry);
  }

  /** The trigger's health; all zero for one that saw nothing yet. */
  of(agent: string, name: string): TriggerHealthEntry {
    const entry = this.#entries.get(keyOf(agent, name)) ?? emptyEntry();
    return { ...entry, counts: { ...entry.counts } };
  }

  /** Forgets the triggers not in `keep` (`<agent>/<name>`): their agent or trigger went away. */
  retain(keep: ReadonlySet<string>): void {
    for (const key of this.#entries.keys()) if (!keep.has(key)) this.#entries.delete(key);
  }
}

/** A trigger's key in TriggerHealth.retain. */
export function triggerKeyOf(agent: string, name: string): string {
  return keyOf(agent, name);
}

function keyOf(agent: string, name: string): string {
  return `${agent}/${name}`;
}

function emptyEntry(): TriggerHealthEntry {
  return {
    last_fired_at: null,
    last_outcome: null,
    last_outcome_at: null,
    counts: { accepted: 0, refused: 0, duplicate: 0, rate_limited: 0, skipped: 0, failed: 0 },
    last_error: null,
  };
}

/** One served trigger with its health (`GET /triggers`). */
export interface TriggerStatus extends TriggerHealthEntry {
  agent: string;
  name: string;
  kind: TriggerKind;
  /** The route (webhook), the agent and statuses followed (after), the folder and glob (watch). */
  detail: string;
  /** Watch triggers: whether this node watches the folder (on a cluster one node does). */
  watching?: boolean;
}
