/** What the detector makes of the latest tool call. */
export type LoopVerdict =
  | { kind: "ok" }
  | { kind: "warn" | "stop"; pattern: "repeat" | "ping_pong"; repeats: number; description: string };

export interface LoopDetectorSettings {
  /** Repeats at which the model is warned (default 3). */
  warnAt: number;
  /** Repeats at which the run ends `loop_detected` (default 5). */
  stopAt: number;
}

/** How many calls of history the detector keeps: enough to see `stopAt` ping-pong pairs. */
const HISTORY_FACTOR = 2;

/**
 * Sees a model going round in circles: the same tool with the same arguments N times in a row,
 * or two calls alternating (A-B-A-B) for N pairs. Warns once per streak at `warnAt`, stops at
 * `stopAt`.
 */
export class LoopDetector {
  readonly #settings: LoopDetectorSettings;
  readonly #recent: string[] = [];
  #warnedStreak: string | undefined;

  constructor(settings: LoopDetectorSettings = { warnAt: 3, stopAt: 5 }) {
    this.#settings = settings;
  }

  record(tool: string, argumentsJson: string): LoopVerdict {
    const signature = `${tool}\u0000${canonicalArguments(argumentsJson)}`;
    this.#recent.push(signature);
    if (this.#recent.length > this.#settings.stopAt * HISTORY_FACTOR) this.#recent.shift();

    const repeats = this.#trailingRepeats(1);
    const pairs = this.#trailingRepeats(2);
    const pattern = repeats >= pairs ? "repeat" : "ping_pong";
    const count = Math.max(repeats, pairs);
    if (count < this.#settings.warnAt) {
      this.#warnedStreak = undefined;
      return { kind: "ok" };
    }
    const description =
      pattern === "repeat"
        ? `${tool} was called ${count} times in a row with the same arguments`
        : `two tool calls (the last: ${tool}) alternated ${count} times in a row`;
    if (count >= this.#settings.stopAt) return { kind: "stop", pattern, repeats: count, description };
    const streak = this.#recent
      .slice(-(pattern === "repeat" ? 1 : 2))
      .sort()
      .join("\u0001");
    if (this.#warnedStreak === streak) return { kind: "ok" };
    this.#warnedStreak = streak;
    return { kind: "warn", pattern, repeats: count, description };
  }

  /** The recent call signatures, for a checkpoint. */
  recentCalls(): string[] {
    return [...this.#recent];
  }

  /** Continues from a checkpoint's recent calls. */
  restore(recent: readonly string[]): void {
    this.#recent.splice(0, this.#recent.length, ...recent);
  }

  /** How many times the last `period` calls repeat at the end of the history (period 2 needs A ≠ B). */
  #trailingRepeats(period: number): number {
    const recent = this.#recent;
    if (recent.length < period) return 0;
    if (period === 2 && recent.at(-1) === recent.at(-2)) return 0;
    let matching = period;
    while (
      matching < recent.length &&
      recent[recent.length - 1 - matching] === recent[recent.length - 1 - matching + period]
    )
      matching += 1;
    return Math.floor(matching / period);
  }
}

/** The same arguments written with other spacing or key order are the same call. */
function canonicalArguments(argumentsJson: string): string {
  try {
    return JSON.stringify(sortKeys(JSON.parse(argumentsJson)));
  } catch {
    return argumentsJson.trim();
  }
}

/** The value with every object's keys in order; the value itself when they are in order already. */
function sortKeys(value: unknown): unknown {
  if (Array.isArray(value)) {
    let changed = false;
    const sorted = value.map((entry: unknown) => {
      const inOrder = sortKeys(entry);
      if (inOrder !== entry) changed = true;
      return inOrder;
    });
    return changed ? sorted : value;
  }
  if (value === null || typeof value !== "object") return value;
  const entries = Object.entries(value as Record<string, unknown>);
  let changed = false;
  for (let index = 0; index < entries.length; index += 1) {
    const entry = entries[index] as [string, unknown];
    const inOrder = sortKeys(entry[1]);
    if (inOrder !== entry[1]) {
      changed = true;
      entry[1] = inOrder;
    }
    if (index > 0 && (entries[index - 1] as [string, unknown])[0].localeCompare(entry[0]) > 0) changed = true;
  }
  if (!changed) return value;
  return Object.fromEntries(entries.sort(([left], [right]) => left.localeCompare(right)));
}
