import type { TriggerSettings } from "./trigger-schema.js";

/**
 * A trigger in one line, for people: the route, scheme, secret reference and rate limit of a
 * webhook, the agent and statuses an `after` follows, the folder, glob and debounce of a watch.
 * Names only the secret's vault reference, never a value.
 */
export function triggerDetail(agent: string, trigger: TriggerSettings): string {
  if ("webhook" in trigger) {
    const filter = trigger.filter === undefined ? "" : ` filter ${JSON.stringify(trigger.filter)}`;
    return `POST /hooks/${agent}/${trigger.webhook} (${trigger.signature}, secret ${trigger.secret}, ${trigger.rate_limit.runs} runs per ${trigger.rate_limit.per / 1_000}s)${filter}`;
  }
  if ("after" in trigger) return `after ${trigger.after.agent}: ${trigger.after.status.join(", ")}`;
  return `${trigger.watch.path} ${trigger.watch.glob} (debounce ${trigger.watch.debounce} ms, ${trigger.rate_limit.runs} runs per ${trigger.rate_limit.per / 1_000}s)`;
}
