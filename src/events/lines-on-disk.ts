import type { EventLog } from "./event-log.js";
import type { RingLine } from "./event-ring.js";

/**
 * Reads from the agent's log the lines the ring keeps as stand-ins (see LineOnDisk), by id: one
 * read from the first of `ids` to the last, and one more for any not found (the current segment
 * may have been closed, moved under segments/, between the listing and the read). A line no longer
 * there (its segment deleted past retention, its log moved aside) is missing from the answer.
 */
export async function readLinesOnDisk(
  log: Pick<EventLog, "history">,
  agent: string,
  ids: readonly number[],
): Promise<Map<number, string>> {
  const found = new Map<number, string>();
  await readInto(found, log, agent, ids);
  const missing = ids.filter((id) => !found.has(id));
  if (missing.length > 0) await readInto(found, log, agent, missing);
  return found;
}

async function readInto(
  found: Map<number, string>,
  log: Pick<EventLog, "history">,
  agent: string,
  ids: readonly number[],
): Promise<void> {
  if (ids.length === 0) return;
  const first = Math.min(...ids);
  const last = Math.max(...ids);
  const wanted = new Set(ids);
  for (const { id, line } of await log.history(agent, first - 1, last - first + 1)) {
    if (wanted.has(id)) found.set(id, line);
  }
}

/** The ids of the stand-ins among `lines` (`ids` their events' ids, index for index). */
export function idsOnDisk(ids: readonly number[], lines: readonly RingLine[]): number[] {
  const onDisk: number[] = [];
  lines.forEach((line, index) => {
    if (typeof line !== "string") onDisk.push(ids[index] ?? 0);
  });
  return onDisk;
}
