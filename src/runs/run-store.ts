import { existsSync, lstatSync, readdirSync, rmSync, statSync } from "node:fs";
import path from "node:path";
import type { Logger } from "../logging/logger.js";
import { flushToDeviceLater } from "../util/flush-to-device.js";
import { LatestFileWrites } from "../util/latest-file-writes.js";
import type { StorageGate } from "../util/storage-gate.js";
import { replaceFileSync } from "../util/replace-file.js";
import { someDirectoryEntry } from "../util/some-directory-entry.js";
import { ensureRunFolder, inspectRecordFile, moveRunFileAside } from "./damaged-run-files.js";
import { isInterrupted } from "./interrupted-run.js";
import { matchesRunQuery, unknownCursor } from "./list-runs.js";
import { type NewestRuns, OpenRunsJournal, type OpenRunsState, noteNewest } from "./open-runs-journal.js";
import {
  byCreation,
  hasRecordFiles,
  indexLineOf,
  readAllRecordFiles,
  readOldIndex,
  writeIndex,
} from "./rebuild-run-index.js";
import { RecentRecords } from "./recent-records.js";
import { readRunLogEnds, recordFromEvents, recordsFromAgentLogs } from "./record-from-events.js";
import type { RunIndexLine } from "./run-record-schema.js";
import { RunIndex } from "./run-index.js";
import type { UnfinishedRuns } from "./run-record-index.js";
import type { RunRecord } from "../run-vocabulary/run-record.js";
import type { RunListQuery } from "./run-filter.js";
import type { RunRecords } from "./run-records.js";
import { isTerminal } from "../run-vocabulary/run-status.js";

export interface RunStoreOptions {
  dataDirectory: string;
  logger: Logger;
  /**
   * Told of writes that fail for lack of space: a record's save then waits for room and is tried
   * again (its status event waits with it); a new run's line fails, and its caller is refused.
   */
  storage?: StorageGate;
  /** Size past which an index segment is closed (default about 1 MB); tests make it small. */
  segmentBytes?: number;
  /** Size past which the open-runs journal is begun afresh (default 4 MB). */
  journalBytes?: number;
}

const RUN_ID = /^r_[0-9a-z]+$/;
/** How far back the index is read for Idempotency-Keys: past the 24 h window, with room for clock skew. */
const KEYS_LOOKED_BACK_MILLISECONDS = 48 * 60 * 60 * 1000;
/**
 * How many runs in a row created before a listing's `since` end it. The index is in creation
 * order, and so are the creation times while the clock goes forward; after the clock was set back
 * (a wrong NTP server corrected, a VM restored) runs created since sit after runs with later times,
 * and stopping at the first earlier one hid those: about one index segment's worth is read on.
 */
const OLDER_RUNS_BEFORE_STOPPING = 2_000;

/** Whether a run stays in the open set: unfinished, or cut off by a crash or a shutdown. */
function isOpen(record: RunRecord): boolean {
  return !isTerminal(record.status) || isInterrupted(record);
}

/**
 * The durable run records, laid out so that start-up reads only what the daemon needs (see
 * docs/durability.md):
 *
 *   runs/<run>.json            a run's record, replaced atomically at every change
 *   runs/index/<n>.jsonl       the run index: one small line per run, in creation order, in segments
 *   runs/open/<n>.jsonl        the open-runs journal: the runs unfinished or cut off, and each
 *                              agent's newest run; a new run's whole record is appended here
 *
 * Start-up folds the journal and reads the records of the open runs, nothing else; any other run
 * is read from its file when asked for (a few hundred are kept in memory). Nothing is served before
 * it is on disk: a run is listed once its index line and its journal line are in the kernel
 * (`create` resolved), and a changed record once its `save` resolved. A restart repairs an index a
 * crash or a hand emptied or removed (rebuilt from the record files), skips torn or garbled lines,
 * and migrates the single-file `runs/index.jsonl` of earlier versions.
 */
export class RunStore implements RunRecords {
  readonly directory: string;
  readonly #dataDirectory: string;
  readonly #logger: Logger;
  readonly #index: RunIndex;
  readonly #journal: OpenRunsJournal;
  /** Open runs (unfinished, or cut off and resumable), their records as on disk. */
  readonly #open = new Map<string, RunRecord>();
  /** New runs whose journal line is not written yet: in any journal begun meanwhile. */
  readonly #creating = new Map<string, RunRecord>();
  #newest: NewestRuns = new Map();
  /**
   * Runs created here whose record was never saved. The first change of such a run, its launch
   * (`running`), is on disk once it is a line of the open-runs journal (one write for every run
   * launched in that turn of the event loop), not once a file is made on libuv's threads (four
   * trips there, queued behind every other launch's): its worker starts that much sooner.
   */
  readonly #unfiled = new Set<string>();
  /** Runs whose `running` line is being appended to the journal: their next save waits for it. */
  readonly #journaling = new Map<string, { record: RunRecord; appended: Promise<void> }>();
  /** Launches whose record file's write is not issued yet (see #launched). */
  readonly #launchWritesDue = new Set<Promise<void>>();
  /** The newest state of each run with a save under way (not served before it is on disk). */
  readonly #saving = new Map<string, RunRecord>();
  readonly #recent = new RecentRecords(512);
  /** Every state is written in turn: each status event finds its own state on disk. */
  readonly #writes: LatestFileWrites;
  readonly #storage: StorageGate | undefined;
  /** The index segments' sizes as last recorded in the journal (a shrunk one means damage). */
  #recordedSegments: Record<string, number> = {};
  /** Agent and Idempotency-Key → run, of the runs created in the last two days (read on first use). */
  #keys: Map<string, string> | undefined;

  private constructor(options: RunStoreOptions) {
    this.#dataDirectory = options.dataDirectory;
    this.directory = path.join(options.dataDirectory, "runs");
    this.#logger = options.logger;
    this.#storage = options.storage;
    this.#writes = new LatestFileWrites({
      merge: false,
      ...(options.storage ? { storage: options.storage } : {}),
    });
    this.#index = new RunIndex({
      runsDirectory: this.directory,
      logger: options.logger,
      ...(options.segmentBytes !== undefined ? { segmentBytes: options.segmentBytes } : {}),
    });
    this.#journal = new OpenRunsJournal({
      runsDirectory: this.directory,
      logger: options.logger,
      ...(options.journalBytes !== undefined ? { maxBytes: options.journalBytes } : {}),
    });
  }

  /**
   * Reads the open-runs journal and the records of the open runs (not the history). Migrates the
   * old single-file index, and rebuilds a damaged index or journal from the record files, with a
   * warning saying what was repaired.
   */
  static open(options: RunStoreOptions): RunStore {
    const store = new RunStore(options);
    const lost =
      ensureRunFolder(store.directory, store.#logger, "the runs are rebuilt from the agent logs") ||
      store.#lostWithEvents();
    let state = lost ? store.#rebuildFromAgentLogs() : store.#migrateOldIndex();
    if (!state) {
      store.#index.open();
      state = store.#journal.read();
      if (state.unreadable > 0) {
        store.#logger.warn(
          { directory: store.#journal.directory, lines: state.unreadable },
          "skipped unreadable lines of the open-runs journal",
        );
      }
      const damage = store.#damageOf(state);
      if (damage) state = store.#rebuild(damage, state);
    }
    for (const record of state.records.values()) {
      const current = store.#currentOf(record);
      if (isOpen(current)) store.#open.set(current.id, current);
    }
    store.#newest = state.newest;
    store.#beginJournal();
    return store;
  }

  get(id: string): RunRecord | undefined {
    // Ids come from requests: only a run id can name a file.
    if (!RUN_ID.test(id)) return undefined;
    const held = this.#open.get(id) ?? this.#recent.get(id);
    if (held) return held;
    if (this.#creating.has(id)) return undefined;
    return this.#read(id);
  }

  /**
   * A page of runs, newest first: the index read backwards from `before` (or its end), each line
   * filtered by agent, parent and time, then its record read for the status. Reading stops at
   * `limit` runs, or at the first run older than `since` (the index is in creation order).
   */
  /** One run: held, else read from its file (see get). */
  find(id: string): Promise<RunRecord | undefined> {
    return Promise.resolve(this.get(id));
  }

  async list(query: RunListQuery): Promise<RunRecord[]> {
    const segments = [...this.#index.segments];
    let position = this.#positionOf(segments, query.before);
    const since = query.since?.toISOString();
    const page: RunRecord[] = [];
    let olderInARow = 0;
    for (let segment = position.segment; segment >= 0 && page.length < query.limit; segment--) {
      const number = segments[segment];
      if (number === undefined) continue;
      const lines = this.#index.linesOf(number);
      const start =
        segment === position.segment && position.line !== undefined ? position.line : lines.length;
      for (let index = start - 1; index >= 0 && page.length < query.limit; index--) {
        const line = lines[index];
        if (!line) continue;
        if (since !== undefined && line.created_at < since) {
          olderInARow += 1;
          if (olderInARow >= OLDER_RUNS_BEFORE_STOPPING) return page;
          continue;
        }
        olderInARow = 0;
        if (query.agent !== undefined && line.agent !== query.agent) continue;
        if (query.parent !== undefined && line.parent_run !== query.parent) continue;
        const record = this.#open.get(line.run) ?? this.#recent.get(line.run) ?? this.#read(line.run, line);
        if (record && !this.#creating.has(line.run) && matchesRunQuery(record, query)) page.push(record);
      }
      position = { segment: segment - 1 };
    }
    return page;
  }

  unfinished(): RunRecord[] {
    return [...this.#open.values()].filter((record) => !isTerminal(record.status)).sort(byCreation);
  }

  /** Judged by each run's newest state, also one being written (crash recovery's, at start). */
  interrupted(): RunRecord[] {
    return [...this.#open.values()]
      .map((record) => this.#saving.get(record.id) ?? record)
      .filter(isInterrupted)
      .sort(byCreation);
  }

  unfinishedOf(agentId: string): UnfinishedRuns {
    const counts = { unfinished: 0, queued: 0 };
    for (const record of this.#open.values()) {
      if (record.agent !== agentId || isTerminal(record.status)) continue;
      counts.unfinished += 1;
      if (record.status === "queued") counts.queued += 1;
    }
    return counts;
  }

  /**
   * The run an agent was posted with `key`, from the index (read backwards once, over the two days
   * before its newest run; kept up to date by `create` after that). The caller applies the
   * 24 h window to the run's `created_at`.
   */
  findByIdempotencyKey(agentId: string, key: string): RunRecord | undefined {
    const run = this.#keysOfRecentRuns().get(`${agentId}\0${key}`);
    return run === undefined ? undefined : this.get(run);
  }

  /** This daemon's own store holds what memory holds. */
  readByIdempotencyKey(agentId: string, key: string): Promise<RunRecord | undefined> {
    return Promise.resolve(this.findByIdempotencyKey(agentId, key));
  }

  #keysOfRecentRuns(): Map<string, string> {
    if (this.#keys) return this.#keys;
    const keys = new Map<string, string>();
    // Two days back from the newest run listed (not from this machine's clock, which the caller's
    // window check reads): the scan's bound only.
    // Runs made while the clock was set back sit among later ones: as for a listing, the scan ends
    // only after OLDER_RUNS_BEFORE_STOPPING older runs in a row, not at the first.
    let since: string | undefined;
    let olderInARow = 0;
    const segments = [...this.#index.segments];
    scan: for (let index = segments.length - 1; index >= 0; index--) {
      const lines = this.#index.linesOf(segments[index] ?? 0);
      for (let at = lines.length - 1; at >= 0; at--) {
        const line = lines[at];
        if (!line) continue;
        since ??= new Date(Date.parse(line.created_at) - KEYS_LOOKED_BACK_MILLISECONDS).toISOString();
        if (line.created_at < since) {
          olderInARow += 1;
          if (olderInARow >= OLDER_RUNS_BEFORE_STOPPING) break scan;
          continue;
        }
        olderInARow = 0;
        const name =
          line.idempotency_key === undefined ? undefined : `${line.agent}\0${line.idempotency_key}`;
        if (name !== undefined && !keys.has(name)) keys.set(name, line.run);
      }
    }
    this.#keys = keys;
    return keys;
  }

  queuedCount(): number {
    let queued = 0;
    for (const record of this.#open.values()) if (record.status === "queued") queued += 1;
    return queued;
  }

  /** Each agent's newest run (read from its file when not held): the start's check of the event logs. */
  newestOfEveryAgent(): RunRecord[] {
    return [...this.#newest.keys()].flatMap((agent) => this.lastOf(agent) ?? []);
  }

  /** The newest run of an agent. */
  lastOf(agentId: string): RunRecord | undefined {
    const newest = this.#newest.get(agentId);
    return newest === undefined ? undefined : this.get(newest.run);
  }

  /**
   * Registers a new run: its index line, then its whole record in the open-runs journal, each
   * grouped with the other runs created in the same turn of the event loop (200 runs started at
   * once cost a few writes, no file created). Resolves once both are in the kernel (safe from
   * kill -9); only then is the run listed. A crash between the two leaves an index line with no
   * record, which nothing lists. `<run>.json` is written at the run's first change.
   */
  async create(record: RunRecord): Promise<void> {
    let position: Awaited<ReturnType<RunIndex["append"]>>;
    try {
      position = await this.#index.append(indexLineOf(record));
    } catch (error) {
      this.#storage?.failed(error, this.#index.directory);
      throw error;
    }
    this.#creating.set(record.id, record);
    try {
      if (this.#journal.full) this.#beginJournal();
      await this.#journal.append({ record, index: position });
    } catch (error) {
      this.#storage?.failed(error, this.#journal.directory);
      throw error;
    } finally {
      this.#creating.delete(record.id);
    }
    this.#open.set(record.id, record);
    this.#unfiled.add(record.id);
    noteNewest(this.#newest, record);
    if (record.idempotency_key !== undefined) {
      this.#keys?.set(`${record.agent}\0${record.idempotency_key}`, record.id);
    }
  }

  /**
   * Writes the record to disk atomically, off the event loop, and resolves once it is there (safe
   * from kill -9); only then is it the one `get` serves. Saves of one run land in the order made
   * (a newer state is never overwritten by an older one). A finished run's record is also flushed
   * to the device in the background, so its result survives a power loss too; it leaves the open
   * runs (a `closed` line in the journal, not waited for: the record on disk says it anyway).
   */
  async save(record: RunRecord, options: { issueAfter?: Promise<void> | undefined } = {}): Promise<void> {
    const file = this.#fileOf(record.id);
    this.#saving.set(record.id, record);
    try {
      if (this.#unfiled.delete(record.id) && record.status === "running") {
        await this.#launched(record, options.issueAfter);
        return;
      }
      // After the journal's line of its launch: the file (which start-up prefers) is newer.
      await this.#journaling.get(record.id)?.appended;
      await this.#writes.write(file, `${JSON.stringify(record, null, 2)}\n`, { sync: false });
    } finally {
      if (this.#saving.get(record.id) === record) this.#saving.delete(record.id);
    }
    if (isTerminal(record.status)) {
      flushToDeviceLater(file, (error) =>
        this.#logger.warn({ err: error, file }, "could not fsync a run record"),
      );
    }
    if (isOpen(record)) {
      this.#open.set(record.id, record);
      return;
    }
    this.#recent.put(record);
    if (this.#open.delete(record.id)) this.#close(record.id);
  }

  /**
   * Deletes finished runs `shouldPrune` picks (with their index lines, records, run logs and
   * checkpoints), going over the index newest first and yielding between segments. `shouldPrune`
   * sees each run's index line and its rank among its agent's runs (1 = newest). An unfinished run
   * is never pruned. Resolves with the runs pruned.
   */
  async prune(
    shouldPrune: (line: { agent: string; created_at: string }, rank: number) => boolean,
  ): Promise<string[]> {
    const segments = [...this.#index.segments];
    const current = segments.at(-1);
    const ranks = new Map<string, number>();
    const pruned: string[] = [];
    for (const number of segments.toReversed()) {
      const lines = await this.#index.readLines(number);
      const kept = [];
      let changed = false;
      for (const line of lines.toReversed()) {
        const rank = (ranks.get(line.agent) ?? 0) + 1;
        ranks.set(line.agent, rank);
        const open = this.#open.get(line.run);
        const unfinished = this.#creating.has(line.run) || (open !== undefined && !isTerminal(open.status));
        if (unfinished || !shouldPrune(line, rank)) {
          kept.push(line);
          continue;
        }
        changed = true;
        if (existsSync(this.#fileOf(line.run)) || open) pruned.push(line.run);
        this.#forget(line.run, line.agent);
      }
      if (changed && number !== current) {
        kept.reverse();
        const name = RunIndex.fileNameOf(number);
        const sizes = { ...this.#recordedSegments };
        if (kept.length > 0) sizes[name] = RunIndex.sizeOf(kept);
        else delete sizes[name];
        // Recorded before the rewrite: a crash between leaves a segment larger than recorded, not smaller.
        this.#recordedSegments = sizes;
        await this.#journal.append({ segments: sizes });
        await this.#index.rewrite(number, kept);
      }
      await new Promise((resolve) => setImmediate(resolve));
    }
    return pruned;
  }

  /**
   * A new run's launch: on disk once its `running` record is a line of the open-runs journal, which
   * start-up reads for a run without a record file (the line replaces its `queued` one). The record
   * file follows off the event loop, not waited for: what a start rebuilds from when the journal is
   * damaged or gone. Its write is issued once `issueAfter` settled (the launch's first model
   * request is out), else at the end of this turn; a later save of the run waits for it.
   */
  async #launched(record: RunRecord, issueAfter: Promise<void> | undefined): Promise<void> {
    // A record file is four trips through libuv's threads (open, write, close, rename): issued at
    // the launch, those of 20 launches took the cores from the event loop launching the rest.
    const due = issueAfter?.catch(() => undefined) ?? new Promise<void>((resolve) => setImmediate(resolve));
    const issued = due.then(() => {
      this.#launchWritesDue.delete(issued);
      this.#writes
        .write(this.#fileOf(record.id), `${JSON.stringify(record, null, 2)}\n`, { sync: false })
        .catch((error: unknown) =>
          this.#logger.warn({ err: error, run: record.id }, "could not write a launched run's record"),
        );
    });
    this.#launchWritesDue.add(issued);
    const appended = (async () => {
      if (this.#journal.full) this.#beginJournal();
      await this.#journal.append({ record });
    })();
    // A later save of the run waits for this: its write is issued after the launch's.
    const issuedAfterLine = appended.catch(() => undefined).then(() => issued);
    const journaling = { record, appended: issuedAfterLine };
    this.#journaling.set(record.id, journaling);
    void issuedAfterLine.then(() => {
      if (this.#journaling.get(record.id) === journaling) this.#journaling.delete(record.id);
    });
    try {
      await appended;
    } catch (error) {
      this.#storage?.failed(error, this.#journal.directory);
      throw error;
    }
    this.#open.set(record.id, record);
  }

  /** Records and new runs accepted and not yet on disk (`GET /health`'s `pending_writes`). */
  get pendingWrites(): number {
    return this.#launchWritesDue.size + this.#writes.size + this.#index.pending + this.#journal.pending;
  }

  /** Resolves once every record saved so far is on disk (before the data folder is let go). */
  async settled(): Promise<void> {
    // Launches' record files are issued once their run logs are created (#launched).
    while (this.#launchWritesDue.size > 0) await Promise.all(this.#launchWritesDue);
    return this.#writes.settled();
  }

  /** Closes the index and the journal (lines appended meanwhile are written first). */
  close(): void {
    this.#index.close();
    this.#journal.close();
  }

  #fileOf(id: string): string {
    return path.join(this.directory, `${id}.json`);
  }

  /** Deletes a pruned run's files and forgets it. */
  #forget(run: string, agent: string): void {
    for (const file of [
      this.#fileOf(run),
      path.join(this.directory, `${run}.events.jsonl`),
      path.join(this.#dataDirectory, "checkpoints", `${run}.json`),
    ]) {
      // A file or a link, never a folder someone put there.
      const stats = lstatSync(file, { throwIfNoEntry: false });
      if (stats && !stats.isDirectory()) rmSync(file, { force: true });
    }
    this.#recent.delete(run);
    this.#unfiled.delete(run);
    if (this.#open.delete(run)) this.#close(run);
    if (this.#newest.get(agent)?.run === run) this.#newest.delete(agent);
  }

  #close(run: string): void {
    this.#journal
      .append({ closed: run })
      .catch((error: unknown) =>
        this.#logger.warn({ err: error, run }, "could not note a finished run in the journal"),
      );
  }

  /** Where a page starts: after the end, or at the line of `before` (NOT_FOUND when not listed). */
  #positionOf(segments: number[], before: string | undefined): { segment: number; line?: number } {
    if (before === undefined) return { segment: segments.length - 1 };
    // Ids sort by creation time: look first in the segment whose first run is the last not after it.
    const guess = segments.findLastIndex((number) => (this.#index.firstRunOf(number) ?? "") <= before);
    const order = [
      guess,
      ...segments
        .map((_, index) => index)
        .filter((index) => index !== guess)
        .reverse(),
    ];
    for (const segment of order) {
      const number = segments[segment];
      if (number === undefined) continue;
      const line = this.#index.linesOf(number).findIndex((entry) => entry.run === before);
      if (line >= 0) return { segment, line };
    }
    throw unknownCursor(before);
  }

  /** A run's index line (undefined when it is not listed): where a damaged record is rebuilt from. */
  #indexLineOf(run: string): RunIndexLine | undefined {
    const segments = [...this.#index.segments];
    try {
      const position = this.#positionOf(segments, run);
      return this.#index.linesOf(segments[position.segment] ?? 0)[position.line ?? -1];
    } catch {
      return undefined;
    }
  }

  /** A run's record read from its file; a damaged one is moved aside and rebuilt (see #repair). */
  #read(id: string, line?: RunIndexLine): RunRecord | undefined {
    const file = this.#fileOf(id);
    const state = inspectRecordFile(file);
    let record: RunRecord | undefined;
    if (state.kind === "read") record = state.record;
    else if (state.kind === "damaged") {
      const base = line ?? this.#indexLineOf(id);
      record = this.#repair(file, id, state.reason, base && { base });
    }
    if (record) this.#recent.put(record);
    return record;
  }

  /**
   * A damaged record file (a folder, a link, empty, garbled) moved aside and its run's record
   * rebuilt from what is known of it (its index line, or its record as created) and its run log's
   * events, then written in its place. An open run's record existed, so the run had begun: it is
   * at least `running` (crash recovery then ends it `crashed`, resumable), never run again from
   * scratch. Undefined when nothing is known of the run.
   */
  #repair(
    file: string,
    run: string,
    reason: string,
    known: { base: RunIndexLine } | { record: RunRecord } | undefined,
  ): RunRecord | undefined {
    const events = readRunLogEnds(path.join(this.directory, `${run}.events.jsonl`));
    let base: RunIndexLine | undefined;
    let start: RunRecord | undefined;
    if (known && "record" in known) {
      start = known.record.status === "queued" ? { ...known.record, status: "running" } : known.record;
      base = indexLineOf(known.record);
    } else base = known?.base;
    const first = events[0];
    base ??= first && { run, agent: first.agent, created_at: first.time };
    const consequence = base
      ? "the run's record is rebuilt from its events (its task and definition hash are unknown)"
      : "nothing else is known of this run, it is no longer listed";
    if (moveRunFileAside(file, reason, this.#logger, consequence) === undefined) return undefined;
    if (!base) return undefined;
    const record = recordFromEvents(base, events, start);
    try {
      replaceFileSync(file, `${JSON.stringify(record, null, 2)}\n`, { sync: false });
    } catch (error) {
      this.#logger.warn({ err: error, file }, "could not write a rebuilt run record");
    }
    return record;
  }

  /** An open run's newest record: its file, else the journal's; a damaged file is repaired. */
  #currentOf(record: RunRecord): RunRecord {
    const file = this.#fileOf(record.id);
    const state = inspectRecordFile(file);
    if (state.kind === "read") return state.record;
    if (state.kind === "missing") return record;
    return this.#repair(file, record.id, state.reason, { record }) ?? record;
  }

  /** Whether `runs/` holds nothing at all while the agent logs tell of runs (it was removed). */
  #lostWithEvents(): boolean {
    if (someDirectoryEntry(this.directory)) return false;
    try {
      return readdirSync(path.join(this.#dataDirectory, "events"), { withFileTypes: true }).some(
        (entry) => entry.isFile() && entry.name.endsWith(".jsonl"),
      );
    } catch {
      return false;
    }
  }

  /** Writes a record file, the index and the journal afresh for every run the agent logs tell of. */
  #rebuildFromAgentLogs(): OpenRunsState {
    const records = recordsFromAgentLogs(this.#dataDirectory).sort(byCreation);
    for (const record of records) {
      replaceFileSync(this.#fileOf(record.id), `${JSON.stringify(record, null, 2)}\n`, { sync: false });
    }
    writeIndex(this.#index.directory, records);
    this.#index.open();
    this.#journal.read();
    this.#logger.warn(
      { directory: this.directory, runs: records.length },
      "rebuilt the run records from the agent logs (their tasks and definition hashes are unknown)",
    );
    return stateOf(records);
  }

  /** Begins a fresh journal file with the open runs (at start, and when it grew large). */
  #beginJournal(): void {
    this.#recordedSegments = this.#index.sizes();
    this.#journal.begin({
      // A launch whose line is still pending in the file about to go is in the new one.
      records: [
        ...[...this.#open.values()].map((record) => this.#journaling.get(record.id)?.record ?? record),
        ...this.#creating.values(),
      ],
      newest: this.#newest,
      segments: this.#recordedSegments,
    });
  }

  /** Why the index or the journal cannot be trusted, or undefined when they can. */
  #damageOf(state: OpenRunsState): string | undefined {
    if (this.#index.movedAside > 0) return "a damaged part of the run index was moved aside";
    if (this.#journal.movedAside > 0) return "a damaged part of the open-runs journal was moved aside";
    const sizes = this.#index.sizes();
    if (state.segments === undefined) {
      const indexed = Object.values(sizes).some((size) => size > 0);
      if (indexed) return "the open-runs journal is missing or empty";
      return hasRecordFiles(this.directory) ? "the run index is missing or empty" : undefined;
    }
    for (const [name, size] of Object.entries(state.segments)) {
      if (size > 0 && (sizes[name] ?? 0) < size)
        return `run index segment ${name} is missing or was cut short`;
    }
    const unreadable = this.#index.unreadableInNewest();
    if (unreadable.lines > 0)
      return `run index segment ${unreadable.segment} holds ${unreadable.lines} unreadable line${unreadable.lines === 1 ? "" : "s"}`;
    return undefined;
  }

  /** Rebuilds the index and the open runs from every record file (and the journal's records). */
  #rebuild(reason: string, state: OpenRunsState): OpenRunsState {
    const journaled = state.records;
    const fromFiles = readAllRecordFiles(this.directory, (file, run, why) => {
      const record = journaled.get(run);
      return this.#repair(file, run, why, record ? { record } : undefined);
    });
    const known = new Set(fromFiles.map((record) => record.id));
    // A queued run's record may live only in the journal.
    const records = [...fromFiles, ...[...state.records.values()].filter((record) => !known.has(record.id))];
    records.sort(byCreation);
    this.#index.close();
    writeIndex(this.#index.directory, records);
    this.#index.open();
    this.#logger.warn(
      { directory: this.#index.directory, reason, runs: records.length },
      `rebuilt the run index and the open runs from the run records (${reason}): every run is listed again`,
    );
    return stateOf(records);
  }

  /** Moves the runs of the old single-file `runs/index.jsonl` into the index and the journal. */
  #migrateOldIndex(): OpenRunsState | undefined {
    const oldIndex = path.join(this.directory, "index.jsonl");
    if (!existsSync(oldIndex) || !statSync(oldIndex).isFile()) return undefined;
    const records = readOldIndex(oldIndex, this.directory, this.#logger);
    // An empty old index beside record files was emptied: the records say what existed.
    if (records.length === 0 && hasRecordFiles(this.directory)) {
      const repaired = readAllRecordFiles(this.directory, (file, run, why) =>
        this.#repair(file, run, why, undefined),
      );
      records.push(...repaired.sort(byCreation));
    }
    writeIndex(this.#index.directory, records);
    this.#index.open();
    const state = stateOf(records);
    // The journal holds the open runs (some only have the record the old index held) before the old index goes.
    this.#newest = state.newest;
    for (const record of state.records.values()) this.#open.set(record.id, record);
    this.#beginJournal();
    this.#open.clear();
    rmSync(oldIndex, { force: true });
    this.#logger.warn(
      { file: oldIndex, runs: records.length },
      "migrated the run index to runs/index/ and runs/open/",
    );
    return state;
  }
}

/** The open runs and each agent's newest run of a whole history. */
function stateOf(records: RunRecord[]): OpenRunsState {
  const state: OpenRunsState = { records: new Map(), newest: new Map(), segments: {}, unreadable: 0 };
  for (const record of records) {
    noteNewest(state.newest, record);
    if (isOpen(record)) state.records.set(record.id, record);
  }
  return state;
}
