/** What an operator's whole new text changed, line by line, as the `memory` event of a `set` tells it. */
export interface MemoryLineChanges {
  /** Lines of the new text that the old one did not have (blank lines left out), in order. */
  added: string[];
  /** Lines of the old text that the new one no longer has, in order. */
  removed: string[];
  /** true when the lists were cut at MAX_CHANGE_CHARS each (the memory itself is whole in the API). */
  cut?: true;
}

/** The most characters each list carries in an event: a rewrite of a large memory stays small. */
export const MAX_CHANGE_CHARS = 4_000;

/**
 * The lines added and removed between two texts, counted as multisets (a line moved is no change,
 * a line written twice where it was once is one added): enough for a reader to see what an
 * operator's edit did, without a diff algorithm's cost on 200,000 characters.
 */
export function memoryLineChanges(before: string, after: string): MemoryLineChanges {
  const counts = new Map<string, number>();
  for (const line of linesOf(before)) counts.set(line, (counts.get(line) ?? 0) + 1);
  const added: string[] = [];
  for (const line of linesOf(after)) {
    const left = counts.get(line) ?? 0;
    if (left > 0) counts.set(line, left - 1);
    else added.push(line);
  }
  const removed: string[] = [];
  for (const line of linesOf(before)) {
    const left = counts.get(line) ?? 0;
    if (left > 0) {
      removed.push(line);
      counts.set(line, left - 1);
    }
  }
  const keptAdded = bounded(added);
  const keptRemoved = bounded(removed);
  const cut = keptAdded.length < added.length || keptRemoved.length < removed.length;
  return { added: keptAdded, removed: keptRemoved, ...(cut ? { cut: true as const } : {}) };
}

function linesOf(text: string): string[] {
  return text.split("\n").filter((line) => line.trim() !== "");
}

function bounded(lines: string[]): string[] {
  const kept: string[] = [];
  let chars = 0;
  for (const line of lines) {
    chars += line.length;
    if (chars > MAX_CHANGE_CHARS) break;
    kept.push(line);
  }
  return kept;
}
