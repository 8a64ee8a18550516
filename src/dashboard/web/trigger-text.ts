// What started a run, in a few words: the run's page and the agent's runs table show it.
import type { RunRecord } from "./api-types.js";

/** `webhook github-pr (delivery 72d3…)`, `after writer (r_…)`, `schedule`: what started the run. */
export function triggerText(trigger: RunRecord["trigger"]): string {
  const name = "name" in trigger && trigger.name !== undefined ? ` ${trigger.name}` : "";
  const id =
    "id" in trigger && trigger.id !== undefined
      ? ` (${trigger.kind === "after" ? "" : "delivery "}${trigger.id})`
      : "";
  return `${trigger.kind}${name}${id}`;
}
