import type { EventRing, RingLine } from "./event-ring.js";
import { decodeMergedCursor, encodeMergedCursor, type MergedCursor } from "./merged-cursor.js";

/** One page of the merged feed (`GET /events`), events as their stored JSON lines. */
export interface MergedLinesPage {
  lines: string[];
  /** Opaque cursor to pass as `after` next time. */
  next: string;
  /**
   * Events after the cursor no longer in memory (0 normally; unknown, so 0, across a restart), and
   * those kept on disk only that were gone from there too (past retention).
   */
  missed: number;
}

/** A merged page as the rings hold it: long lines still stand-ins (see LineOnDisk). */
export interface MergedRingPage extends Omit<MergedLinesPage, "lines"> {
  lines: RingLine[];
  /** The agent and the id of each line. */
  agents: string[];
  ids: number[];
  /** How many of `lines` are stand-ins. */
  onDisk: number;
}

interface Candidate {
  agent: string;
  id: number;
  sequence: number;
  time: number;
  line: RingLine;
}

/** The store's state the merged feed reads. */
export interface MergedFeedSource {
  rings: ReadonlyMap<string, EventRing>;
  epoch: string;
  lastSequence: number;
}

/**
 * Events of every agent after `cursorText`, in the order the store received them, at most `limit`.
 * A cursor from an earlier daemon process resumes by time: events at the very same millisecond as
 * the last one read may then be served twice, never skipped.
 */
export function readMergedFeed(
  source: MergedFeedSource,
  cursorText: string | undefined,
  limit: number,
): MergedRingPage {
  const cursor = decodeMergedCursor(cursorText);
  const sameProcess = cursor === undefined || cursor.epoch === source.epoch;
  const after = sameProcess ? (cursor?.sequence ?? 0) : 0;
  const candidates: Candidate[] = [];
  let inMemoryAfter = 0;
  for (const [agent, ring] of source.rings) {
    if (sameProcess) {
      if (ring.newestSequence <= after) continue;
      inMemoryAfter += ring.countAfterSequence(after);
      collect(candidates, agent, ring.afterSequence(after, limit));
    } else if (cursor) {
      const all = ring.all();
      const keep = all.ids.map((id, index) =>
        agent === cursor.agent ? id > cursor.id : (all.times[index] ?? 0) >= cursor.time,
      );
      collect(candidates, agent, all, keep);
    }
  }
  candidates.sort((left, right) => left.sequence - right.sequence);
  const page = candidates.slice(0, limit);
  const last = page.at(-1);
  const next: MergedCursor = last
    ? { epoch: source.epoch, sequence: last.sequence, time: last.time, agent: last.agent, id: last.id }
    : {
        epoch: source.epoch,
        sequence: sameProcess ? after : source.lastSequence,
        time: cursor?.time ?? 0,
        agent: cursor?.agent ?? "",
        id: cursor?.id ?? 0,
      };
  const missed = sameProcess ? Math.max(0, source.lastSequence - after - inMemoryAfter) : 0;
  let onDisk = 0;
  for (const candidate of page) if (typeof candidate.line !== "string") onDisk++;
  return {
    lines: page.map((candidate) => candidate.line),
    agents: page.map((candidate) => candidate.agent),
    ids: page.map((candidate) => candidate.id),
    onDisk,
    next: encodeMergedCursor(next),
    missed,
  };
}

function collect(
  candidates: Candidate[],
  agent: string,
  slice: ReturnType<EventRing["all"]>,
  keep?: boolean[],
): void {
  slice.ids.forEach((id, index) => {
    if (keep && !keep[index]) return;
    candidates.push({
      agent,
      id,
      sequence: slice.sequences[index] ?? 0,
      time: slice.times[index] ?? 0,
      line: slice.lines[index] ?? "",
    });
  });
}
