import type { DeliveryFacts } from "./delivery-facts.js";

/**
 * The most of each text a delivery keeps of a run (its result, error, task, the agent's message,
 * what it waits for): 100,000 characters, what the longest message of any kind takes. A delivery
 * stores its facts (they are a webhook's `data`), and the daemon keeps up to 1,000 finished
 * deliveries and rewrites them at every attempt: a run's result of megabytes, kept whole in each
 * of its deliveries, would make that file and the daemon's memory grow by megabytes a delivery.
 */
export const MAX_FACT_CHARACTERS = 100_000;

const TEXT_FACTS = ["result", "error", "task", "message", "waiting_for"] as const;

/**
 * The facts with each text cut to MAX_FACT_CHARACTERS, a note at the cut saying how much more the
 * run's record has. Cut after masking: a vault value shows as its whole mask or not at all.
 */
export function boundedFacts<Facts extends DeliveryFacts>(facts: Facts): Facts {
  const bounded = { ...facts };
  for (const name of TEXT_FACTS) {
    const text = bounded[name];
    if (text !== undefined && text.length > MAX_FACT_CHARACTERS) bounded[name] = cutText(text);
  }
  return bounded;
}

function cutText(text: string): string {
  let end = MAX_FACT_CHARACTERS;
  // Never half of a character written with two UTF-16 units (an emoji): JSON would carry a lone half.
  const last = text.charCodeAt(end - 1);
  if (last >= 0xd800 && last <= 0xdbff) end -= 1;
  const more = text.length - end;
  return `${text.slice(0, end)}\n[agentd cut ${more.toLocaleString("en-US")} more characters here: the run's record has the whole text]`;
}
