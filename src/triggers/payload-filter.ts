import type { WebhookFilter } from "./trigger-schema.js";
import { valueAt } from "./task-template.js";

/**
 * Whether a payload passes a webhook's `filter:`: every key, a dotted path into the payload
 * (`action`, `pull_request.draft`), must hold the value given, or one of the values of a list.
 * Values compare as JSON scalars, exactly (`"1"` is not `1`); a path that is missing, or leads
 * to an object or a list, matches nothing.
 */
export function matchesFilter(payload: unknown, filter: WebhookFilter): boolean {
  return Object.entries(filter).every(([path, wanted]) => {
    const value = valueAt(payload, path.split("."));
    const accepted = Array.isArray(wanted) ? wanted : [wanted];
    return accepted.some((candidate) => candidate === value);
  });
}
