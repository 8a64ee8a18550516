import type pg from "pg";
import type { RunRecord } from "../../run-vocabulary/run-record.js";
import { RunRecordIndex, type UnfinishedRuns } from "../../runs/run-record-index.js";
import { isInterrupted } from "../../runs/interrupted-run.js";
import type { RunListQuery } from "../../runs/run-filter.js";
import type { RunRecords } from "../../runs/run-records.js";
import { isTerminal } from "../../run-vocabulary/run-status.js";
import type { PostgresWriter } from "./postgres-writer.js";
import { parseRunRecord } from "./run-record-text.js";
import { readRunPage } from "./run-page-query.js";
import type { RefusedRunWrite } from "./write-batch.js";
import type { WriteOperation } from "./write-operation.js";

/** Finished runs held in memory besides each agent's newest: older ones are read back on demand. */
export const FINISHED_RUNS_HELD = 2_000;

export interface PostgresRunRecordsOptions {
  writer: PostgresWriter;
  /** Reads history that is not held: pages, a run by id. */
  pool: Pick<pg.Pool, "query">;
  /** This node's id. */
  node: string;
  /** Finished runs held beyond the unfinished ones and each agent's newest (default FINISHED_RUNS_HELD). */
  finishedHeld?: number;
}

/**
 * The cluster's run records. In memory: every unfinished run of every node, each agent's newest
 * run, and the latest finished runs up to a bound (loaded at start, then followed through the
 * change feed), so memory and start-up stay flat however long the history; older runs are read
 * from the database (`page`, `find`). This node's changes are written through the writer in order,
 * before the status event that reports them, and held (served) once committed; a run's end is
 * served once its ending status event is too (see `endTold`). A run can change hands (posted by one node, claimed
 * by another), so a record from the feed replaces the one held only when it is newer: never while
 * this node's own write of the run waits, nor when this node's last write of it committed with a
 * later change.
 */
export class PostgresRunRecords implements RunRecords {
  readonly #records = new RunRecordIndex();
  /** Which node wrote each run held last: the one running it while it is unfinished. */
  readonly #nodes: Map<string, string>;
  readonly #writer: PostgresWriter;
  readonly #pool: Pick<pg.Pool, "query">;
  readonly #node: string;
  readonly #finishedHeld: number;
  /** The finished runs held (besides the unfinished ones, which are always held). */
  readonly #finished = new Set<string>();
  /**
   * The same ids, the longest held first, from `#finishedHead` on: a queue, since a Set emptied
   * from its front is walked over its deleted slots. An id no longer in `#finished` is skipped.
   */
  #finishedOrder: string[] = [];
  #finishedHead = 0;
  /** The newest record of each run saved and not committed yet: for decisions, never served. */
  readonly #saving = new Map<string, RunRecord>();
  /**
   * This node's ending records committed whose ending status event was not read back yet: served
   * from then on, so a client that sees a run ended finds its events up to the end served too.
   */
  readonly #ending = new Map<string, RunRecord>();
  /** Ending status events published and not read back yet: the run's status each tells. */
  readonly #endsPublished = new Map<string, string>();
  /** This node's writes of each run not committed yet. */
  readonly #pendingWrites = new Map<string, number>();
  /**
   * The change number of each run's record held: this node's last committed write of it, or the
   * newest record of another node applied since. A record with a lower number is older.
   */
  readonly #heldChanges = new Map<string, bigint>();
  /**
   * The newest record another node committed of a run while this node's own write of it waited:
   * applied once that write settles, unless what it settled with is newer. Dropping it instead
   * left a node serving a run as `queued` for good when the feed brought the claiming node's
   * `running` before this node's write of the posted run had settled (a busy event loop reads the
   * two sockets in either order), since the feed never reads a change twice.
   */
  readonly #remoteWhileWriting = new Map<string, { record: RunRecord; node: string; change: bigint }>();

  constructor(options: PostgresRunRecordsOptions, loaded: RunRecord[], nodes: Map<string, string>) {
    this.#writer = options.writer;
    this.#pool = options.pool;
    this.#node = options.node;
    this.#finishedHeld = options.finishedHeld ?? FINISHED_RUNS_HELD;
    this.#nodes = nodes;
    for (const record of loaded) this.#put(record);
  }

  nodeOf(id: string): string | undefined {
    return this.#nodes.get(id);
  }

  unfinished(): RunRecord[] {
    return this.#records.all().filter((record) => !isTerminal(record.status));
  }

  interrupted(): RunRecord[] {
    return this.#records.all().filter(isInterrupted);
  }

  /**
   * One page of runs, newest first, read from the database through an index; a run held in
   * memory is served as held (committed, and maybe newer than the page's snapshot).
   */
  async list(query: RunListQuery): Promise<RunRecord[]> {
    const stored = await readRunPage(this.#pool, query);
    return stored.map(({ record }) => this.#records.get(record.id) ?? record);
  }

  /** Runs held in memory: every unfinished run, each agent's newest, the latest finished ones. */
  get held(): number {
    return this.#records.all().length;
  }

  /** A run by id: from memory when held, else from the database. */
  async find(id: string): Promise<RunRecord | undefined> {
    const held = this.#records.get(id);
    if (held) return held;
    const result = await this.#pool.query<{ record: unknown }>(
      "SELECT record FROM agentd_runs WHERE id = $1",
      [id],
    );
    return parseRunRecord(result.rows[0]?.record);
  }

  /** Runs pruned from the database: no longer held either. */
  forget(ids: Iterable<string>): void {
    for (const id of ids) this.#letGo(id);
  }

  get(id: string): RunRecord | undefined {
    return this.#records.get(id);
  }

  unfinishedOf(agentId: string): UnfinishedRuns {
    return this.#records.unfinishedOf(agentId);
  }

  findByIdempotencyKey(agentId: string, key: string): RunRecord | undefined {
    return this.#records.byIdempotencyKey(agentId, key);
  }

  /** From the database (one row: the key is unique per agent), served as held when held. */
  async readByIdempotencyKey(agentId: string, key: string): Promise<RunRecord | undefined> {
    const result = await this.#pool.query<{ record: unknown }>(
      "SELECT record FROM agentd_runs WHERE agent = $1 AND idempotency_key = $2",
      [agentId, key],
    );
    const stored = parseRunRecord(result.rows[0]?.record);
    return stored === undefined ? undefined : (this.#records.get(stored.id) ?? stored);
  }

  queuedCount(): number {
    return this.#records.queued;
  }

  lastOf(agentId: string): RunRecord | undefined {
    return this.#records.lastOf(agentId);
  }

  /**
   * Listed once committed, like the files store's: nothing reports a run a crash could lose.
   * `claimable`: queued for any node of the cluster to claim, rather than run here.
   */
  async create(record: RunRecord, claimable = false): Promise<void> {
    this.#writeStarted(record.id);
    try {
      await this.#writer.write({ kind: "run", record, claimable });
    } catch (error) {
      this.#writeSettled(record.id, undefined);
      throw error;
    }
    // Held when it committed (settled), or replaced since by a newer record of the node that
    // claimed it: never put back over that one.
    if (this.#records.get(record.id)) return;
    this.#put(record);
    this.#nodes.set(record.id, this.#node);
  }

  /**
   * Queues the record's write; it is served (`get`, `find`, `list`, the counts) once committed, so
   * nothing reports a status a kill -9 could still lose. Its status event, queued right after,
   * commits with it or later.
   */
  save(record: RunRecord): void {
    this.#saving.set(record.id, record);
    this.#writeStarted(record.id);
    this.#writer.enqueue({ kind: "run", record });
  }

  /** The run's ending status event was published (queued after its record): its record waits for it. */
  endPublished(id: string, status: string): void {
    this.#endsPublished.set(id, status);
  }

  unwritten(id: string): RunRecord | undefined {
    return this.#saving.get(id) ?? this.#ending.get(id);
  }

  /**
   * A status event of the run was read back from the database (and is about to be served), or
   * will never be (dropped, or a read that should have brought it failed): its ending record held
   * back is served now if it is the one the event tells (`status` undefined: whatever it is).
   */
  endTold(id: string, status?: string): void {
    if (status === undefined || this.#endsPublished.get(id) === status) this.#endsPublished.delete(id);
    // Read back before this node's write of it settled (a busy event loop reads the feed's socket
    // and the writer's in either order): the event commits with its record or after it, so the
    // record is committed, and a listener of the event (a delivery of the run's end) reads it.
    const saving = this.#saving.get(id);
    if (status !== undefined && saving?.status === status && !this.#ending.has(id)) {
      this.#put(saving);
      this.#nodes.set(id, this.#node);
      return;
    }
    const ending = this.#ending.get(id);
    if (ending === undefined || (status !== undefined && ending.status !== status)) return;
    this.#ending.delete(id);
    this.#put(ending);
  }

  /** A record this node wrote in a transaction of its own (not the writer's), committed with `change`. */
  written(record: RunRecord, change: string): void {
    this.#put(record);
    this.#nodes.set(record.id, this.#node);
    this.#heldChanges.set(record.id, BigInt(change));
  }

  /**
   * A batch of the writer committed (with its change) or dropped. A run write the database refused
   * (another node holds the run now) leaves the record the database keeps, as the feed would.
   */
  settled(
    batch: WriteOperation[],
    change: string | undefined,
    refused: RefusedRunWrite[],
    stale: readonly string[] = [],
  ): void {
    const kept = new Map(refused.map((write) => [write.record.id, write]));
    // A new run of a fire another node took over: never written, so never held here.
    const notWritten = new Set(stale);
    for (const operation of batch) {
      if (operation.kind !== "run") continue;
      const { record } = operation;
      if (this.#saving.get(record.id) === record) this.#saving.delete(record.id);
      const committed = change !== undefined && !kept.has(record.id) && !notWritten.has(record.id);
      // Batches commit in order: the newest committed state of a run is held last; an ending one
      // once its status event is served (`endTold`).
      if (committed) {
        this.#ending.delete(record.id);
        if (isTerminal(record.status) && this.#endsPublished.get(record.id) === record.status)
          this.#ending.set(record.id, record);
        else this.#put(record);
        this.#nodes.set(record.id, this.#node);
      }
      this.#writeSettled(record.id, committed ? change : undefined);
    }
    for (const { record, node, change: keptChange } of refused) {
      if (this.#pendingWrites.has(record.id)) continue;
      // A newer record of another node was applied meanwhile (#remoteWhileWriting).
      if ((this.#heldChanges.get(record.id) ?? -1n) > BigInt(keptChange)) continue;
      this.#ending.delete(record.id);
      this.#put(record);
      this.#nodes.set(record.id, node);
      // The feed's older changes of the run must not replace it.
      this.#heldChanges.set(record.id, BigInt(keptChange));
    }
  }

  #writeStarted(id: string): void {
    this.#pendingWrites.set(id, (this.#pendingWrites.get(id) ?? 0) + 1);
  }

  #writeSettled(id: string, change: string | undefined): void {
    const left = (this.#pendingWrites.get(id) ?? 1) - 1;
    if (left <= 0) this.#pendingWrites.delete(id);
    else this.#pendingWrites.set(id, left);
    // Only of a run still held: a run let go of would keep its entry forever.
    if (change !== undefined && this.#records.get(id)) this.#heldChanges.set(id, BigInt(change));
    const remote = left <= 0 ? this.#remoteWhileWriting.get(id) : undefined;
    if (remote !== undefined) {
      this.#remoteWhileWriting.delete(id);
      this.#applyNewer(remote.record, remote.node, remote.change);
    }
  }

  /**
   * A record another node wrote (from the change feed), unless what is held is newer; while this
   * node's own write of the run waits, kept until that write settles.
   */
  applyRemote(record: RunRecord, node: string, change: string): void {
    const number = BigInt(change);
    if (this.#pendingWrites.has(record.id)) {
      const kept = this.#remoteWhileWriting.get(record.id);
      if (kept === undefined || kept.change < number)
        this.#remoteWhileWriting.set(record.id, { record, node, change: number });
      return;
    }
    this.#applyNewer(record, node, number);
  }

  #applyNewer(record: RunRecord, node: string, change: bigint): void {
    if ((this.#heldChanges.get(record.id) ?? -1n) > change) return;
    this.#ending.delete(record.id);
    this.#put(record);
    this.#nodes.set(record.id, node);
    if (this.#records.get(record.id)) this.#heldChanges.set(record.id, change);
  }

  /**
   * Holds a record; a finished one joins the finished runs held, and past their bound the longest
   * held lets go (never an agent's newest run).
   */
  #put(record: RunRecord): void {
    this.#records.put(record);
    if (!isTerminal(record.status)) {
      this.#finished.delete(record.id);
      return;
    }
    if (this.#finished.has(record.id)) return;
    this.#finished.add(record.id);
    this.#finishedOrder.push(record.id);
    // Each one kept goes to the back; at most one walk over the queue per record held.
    let visits = this.#finishedOrder.length - this.#finishedHead;
    while (this.#finished.size > this.#finishedHeld && visits > 0) {
      visits -= 1;
      const id = this.#finishedOrder[this.#finishedHead] as string;
      this.#finishedHead += 1;
      if (!this.#finished.has(id)) continue;
      const held = this.#records.get(id);
      if (held && this.#records.lastOf(held.agent)?.id === id) {
        this.#finishedOrder.push(id);
        continue;
      }
      this.#letGo(id);
    }
    if (this.#finishedHead > 1_024 && this.#finishedHead * 2 > this.#finishedOrder.length) {
      this.#finishedOrder = this.#finishedOrder.slice(this.#finishedHead);
      this.#finishedHead = 0;
    }
  }

  #letGo(id: string): void {
    this.#ending.delete(id);
    this.#records.forget(id);
    this.#finished.delete(id);
    this.#nodes.delete(id);
    if (!this.#pendingWrites.has(id)) this.#heldChanges.delete(id);
  }
}
