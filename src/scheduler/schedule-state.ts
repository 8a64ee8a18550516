import { existsSync, renameSync } from "node:fs";
import { z } from "zod";
import type { Logger } from "../logging/logger.js";
import { replaceFileSync } from "../util/replace-file.js";
import type { SpareFiles } from "../util/spare-files.js";
import type { StorageGate } from "../util/storage-gate.js";
import type { ScheduleStates, UnsettledFire } from "./schedule-states.js";
import { readRegularFileSync } from "../util/read-regular-file.js";
import { errnoCodeOf } from "../util/errno-code.js";

const AgentScheduleStateSchema = z.object({
  /** When the schedule last fired (ISO), whether the fire ran or was skipped. */
  last_fire: z.string().optional(),
  /** Fires up to this time are accounted for: first sight of the schedule, or a start-up's check. */
  checked_at: z.string(),
  /**
   * The fire the scheduler waits for: the first of `pattern` after `after`. A restart before it,
   * with the same pattern, knows that no fire was missed and which comes next without cron arithmetic.
   */
  next: z.object({ fire: z.string(), after: z.string(), pattern: z.string() }).optional(),
});
export type AgentScheduleState = z.infer<typeof AgentScheduleStateSchema>;

/** The time after which a fire has not been accounted for: the later of the check and the last fire. */
export function accountedUntilOf(state: AgentScheduleState | undefined): Date | undefined {
  if (!state) return undefined;
  const times = [state.checked_at, state.last_fire].flatMap((time) => (time ? [Date.parse(time)] : []));
  return new Date(Math.max(...times));
}

export interface ScheduleStateOptions {
  /** Rewrites take their temp file from these (no file created when a fire is recorded). */
  spares?: SpareFiles;
  /** A rewrite that fails for lack of space is kept for the next flush instead of throwing. */
  storage?: StorageGate;
  /** The daemon's clock: names what is moved aside. */
  now?: () => Date;
}

const ScheduleStateFileSchema = z.object({ agents: z.record(z.string(), AgentScheduleStateSchema) });

/**
 * `<data_dir>/schedules.json`: per agent, the last fire and how far fires are accounted for, so a
 * restart can tell which fires were missed while the daemon was down. Changes are kept in memory
 * until `flush()`, which rewrites the file atomically: once per batch (a start-up with 1,000
 * schedules, one timer wake), not once per agent.
 */
export class ScheduleState implements ScheduleStates {
  readonly #file: string;
  readonly #agents: Map<string, AgentScheduleState>;
  readonly #notStarted: UnsettledFire[] = [];
  #dirty = false;
  #spares: SpareFiles | undefined;
  #storage: StorageGate | undefined;
  #logger: Logger;
  readonly #now: () => Date;
  /** The last flush failed (said once, until one succeeds). */
  #unwritable = false;

  private constructor(
    file: string,
    agents: Map<string, AgentScheduleState>,
    logger: Logger,
    now: () => Date,
  ) {
    this.#file = file;
    this.#agents = agents;
    this.#logger = logger;
    this.#now = now;
  }

  /**
   * Reads the file; a missing or unreadable file starts empty (unreadable is logged). With
   * `spares`, its rewrites take their temp file from them (no file created when a fire is recorded).
   * With `storage`, a rewrite that fails for lack of space is kept for the next flush instead of
   * throwing. `now` (the daemon's clock) names a damaged file moved aside.
   */
  static load(file: string, logger: Logger, options: ScheduleStateOptions = {}): ScheduleState {
    const state = ScheduleState.#read(file, logger, options.now ?? (() => new Date()));
    state.#spares = options.spares;
    state.#storage = options.storage;
    return state;
  }

  static #read(file: string, logger: Logger, now: () => Date): ScheduleState {
    if (!existsSync(file)) return new ScheduleState(file, new Map(), logger, now);
    let parsed: ReturnType<typeof ScheduleStateFileSchema.safeParse>;
    try {
      parsed = ScheduleStateFileSchema.safeParse(JSON.parse(readRegularFileSync(file)));
    } catch (error) {
      if (error instanceof SyntaxError) {
        logger.warn(
          { file, err: error },
          "schedule state is not JSON; missed fires cannot be detected this time",
        );
        return new ScheduleState(file, new Map(), logger, now);
      }
      // A folder or a FIFO in its place is no JSON to fix, and a folder would refuse every
      // rewrite (the first ended the start as a bug): it is moved aside, kept for a look.
      moveAside(file, `cannot be read (${errnoCodeOf(error) ?? "error"})`, logger, now());
      return new ScheduleState(file, new Map(), logger, now);
    }
    if (!parsed.success) {
      logger.warn({ file }, "schedule state is malformed; missed fires cannot be detected this time");
      return new ScheduleState(file, new Map(), logger, now);
    }
    return new ScheduleState(file, new Map(Object.entries(parsed.data.agents)), logger, now);
  }

  get(agentId: string): AgentScheduleState | undefined {
    return this.#agents.get(agentId);
  }

  /** The time after which a fire of this agent has not been accounted for. */
  accountedUntil(agentId: string): Date | undefined {
    return accountedUntilOf(this.#agents.get(agentId));
  }

  /** Changes the agent's state in memory; `flush()` writes it. */
  set(agentId: string, state: AgentScheduleState): void {
    this.#agents.set(agentId, state);
    this.#dirty = true;
  }

  delete(agentId: string): void {
    if (this.#agents.delete(agentId)) this.#dirty = true;
  }

  /**
   * Writes the file when something changed since the last flush. On a full store the change stays
   * unwritten, and the next flush (the next fire) tries again.
   */
  flush(): void {
    if (!this.#dirty) return;
    const agents = Object.fromEntries(this.#agents);
    const text = `${JSON.stringify({ agents }, null, 2)}\n`;
    try {
      this.#write(text);
    } catch (error) {
      if (this.#storage?.failed(error, this.#file)) return;
      // Never thrown: a fire's flush runs in a timer's callback, where a throw ends the daemon.
      if (!this.#unwritable)
        this.#logger.error(
          { file: this.#file, err: error },
          `schedule state cannot be written (${errnoCodeOf(error) ?? "error"}): it is kept in memory and written again at the next fire; missed fires cannot be detected after a restart until then`,
        );
      this.#unwritable = true;
      return;
    }
    this.#dirty = false;
    this.#unwritable = false;
    this.#storage?.succeeded();
  }

  /**
   * Rewritten on every fire: kill -9 safe without an fsync each time. A folder put in its place
   * while the daemon runs is moved aside as at a start, and the state written in its place.
   */
  #write(text: string): void {
    try {
      replaceFileSync(this.#file, text, { sync: false, spares: this.#spares });
    } catch (error) {
      const moved =
        errnoCodeOf(error) === "EISDIR" &&
        moveAside(
          this.#file,
          "cannot be written (EISDIR)",
          this.#logger,
          this.#now(),
          "the state is written in its place",
        );
      if (!moved) throw error;
      replaceFileSync(this.#file, text, { sync: false, spares: this.#spares });
    }
  }

  /** One daemon owns its `data_dir` (the lock): every fire is its own. */
  claimFire(): boolean {
    return true;
  }

  /** No claims to settle: the state file's `last_fire` accounts for fires. */
  settleFires(): void {}

  /** Fires whose run the files store could not write: run or reported by the next sweep. */
  fireNotStarted(agentId: string, scheduledFor: string[]): void {
    for (const fire of scheduledFor) this.#notStarted.push({ agent: agentId, scheduledFor: fire });
  }

  /** One daemon: every fire it woke too late for is its own to run or report. */
  firesMissed(agentId: string, scheduledFor: string[]): void {
    this.fireNotStarted(agentId, scheduledFor);
  }

  async unsettledFires(): Promise<UnsettledFire[]> {
    return this.#notStarted
      .splice(0)
      .sort(
        (left, right) =>
          left.agent.localeCompare(right.agent) || left.scheduledFor.localeCompare(right.scheduledFor),
      );
  }
}

/**
 * Moves what sits at the state file's path aside to `<file>.damaged-<at>` and says so with
 * `consequence`; when even that fails, says to move it by hand (the state is then kept in memory
 * only). Returns whether it was moved.
 */
function moveAside(
  file: string,
  reason: string,
  logger: Logger,
  at: Date,
  consequence = "missed fires cannot be detected this time, the state starts afresh",
): boolean {
  const aside = `${file}.damaged-${at.toISOString().replaceAll(":", "-")}`;
  try {
    renameSync(file, aside);
  } catch (error) {
    logger.error(
      { file, reason, err: error },
      `schedule state ${reason} nor moved aside: move ${file} aside by hand and restart; missed fires cannot be detected this time`,
    );
    return false;
  }
  logger.warn(
    { file, moved_to: aside, reason },
    `moved ${file} aside (${reason}): ${consequence}; look at ${aside}, then delete it`,
  );
  return true;
}
