import type { EventPublisher } from "../../events/event-bus.js";
import type { Logger } from "../../logging/logger.js";
import type { LiveRun, LiveRuns } from "../live-runs.js";
import { OrderedPublications } from "../ordered-publications.js";
import type { RunRecord } from "../../run-vocabulary/run-record.js";
import type { RunRecords } from "../run-records.js";
import { isTerminal } from "../../run-vocabulary/run-status.js";
import { crashedRecord } from "../resume/recover-runs.js";

export interface RunRecorderOptions {
  store: RunRecords;
  events: EventPublisher;
  live: LiveRuns;
  logger: Logger;
  now: () => Date;
  redact: (record: RunRecord) => RunRecord;
  /** The event logs of new runs: held in memory while queued (see RunManagerOptions.runLogs). */
  runLogs?: { hold(runId: string, agentId: string): void } | undefined;
}

/** What a record's write waits for besides the run's earlier writes (a launch's: see RunLauncher). */
export interface WriteWaits {
  /** The `status` event also waits for this (the run's log being created). */
  publishAfter?: Promise<void>;
  /** A launch's record file is issued once this settled (RunStore.save's `issueAfter`). */
  issueAfter?: Promise<void>;
}

/** Extra fields of a `status` event (a resumed run says from which round). */
export interface StatusExtra {
  resumed_from_round?: number;
}

/**
 * Every change of a run's record: written to the store first, then told as a `status` event, never
 * the other way round. Records are written off the event loop: a status event goes out once its
 * record is on disk, and the run's other events made meanwhile wait behind it.
 */
export class RunRecorder {
  readonly #options: RunRecorderOptions;
  readonly publications: OrderedPublications;
  /** Records saved but not on disk yet (the store serves them once they are), by run id. */
  readonly #unwritten = new Map<string, RunRecord>();

  constructor(options: RunRecorderOptions) {
    this.#options = options;
    this.publications = new OrderedPublications(options.logger);
  }

  /** Writes a new run's record; its event log is created when it launches (see `runLogs`). */
  async create(record: RunRecord): Promise<void> {
    await this.#options.store.create(record);
    this.#options.runLogs?.hold(record.id, record.agent);
  }

  /**
   * Writes the new record to disk, then publishes the `status` event: never the other way round.
   * `waits`: what else the write and the event wait for (a launch's).
   */
  transition(run: LiveRun, patch: Partial<RunRecord>, message?: string, waits: WriteWaits = {}): RunRecord {
    const record = this.#options.redact({ ...run.record, ...patch });
    run.record = record;
    void this.publishAfterWrite(record, message, {}, waits);
    return record;
  }

  /** Saves the record and publishes its `status` event once it is on disk, in the run's order. */
  publishAfterWrite(
    record: RunRecord,
    message?: string,
    extra: StatusExtra = {},
    waits: WriteWaits = {},
  ): Promise<void> {
    this.#unwritten.set(record.id, record);
    const { publishAfter, issueAfter } = waits;
    const saved = this.#options.store.save(record, { issueAfter });
    const written = publishAfter ? Promise.all([saved, publishAfter]).then(() => undefined) : saved;
    return this.publications.afterWrite(record.id, written, () => {
      if (this.#unwritten.get(record.id) === record) this.#unwritten.delete(record.id);
      this.publishStatus(record, message, extra);
    });
  }

  /** A run's newest record, written or still being written, for decisions here (not to serve). */
  newest(id: string): RunRecord | undefined {
    const { store } = this.#options;
    return (
      this.#options.live.get(id)?.record ?? this.#unwritten.get(id) ?? store.unwritten?.(id) ?? store.get(id)
    );
  }

  publishStatus(record: RunRecord, message?: string, extra: StatusExtra = {}): void {
    this.#options.events.publish({
      agent: record.agent,
      run: record.id,
      type: "status",
      data: {
        status: record.status,
        ...(record.reason === undefined ? {} : { reason: record.reason }),
        ...(message === undefined ? {} : { message }),
        ...(record.parent_run === undefined ? {} : { parent_run: record.parent_run }),
        ...(isTerminal(record.status) ? { usage: record.usage, cost_usd: record.cost_usd } : {}),
        ...extra,
      },
    });
  }

  /** Ends a run that never started here (no slot, no control): its record, then its status event. */
  endUnstarted(record: RunRecord, patch: Partial<RunRecord>, message: string): RunRecord {
    const ended = this.#options.redact({ ...record, ...patch, ended_at: this.#options.now().toISOString() });
    void this.publishAfterWrite(ended, message);
    return ended;
  }

  /**
   * Ends a run interrupted by a crash (found at start-up, or left by a dead node) `failed`/`crashed`,
   * keeping the usage and cost it had recorded: its record, then its status event.
   */
  markCrashed(record: RunRecord, message: string): RunRecord {
    const crashed = crashedRecord(record, this.#options.now(), message);
    void this.publishAfterWrite(crashed, message);
    return crashed;
  }
}
