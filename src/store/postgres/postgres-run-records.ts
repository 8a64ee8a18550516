import type { RunRecord } from "../../runs/run-record.js";
import { RunRecordIndex, type UnfinishedRuns } from "../../runs/run-record-index.js";
import type { RunRecords } from "../../runs/run-records.js";
import type { PostgresWriter } from "./postgres-writer.js";
import type { RefusedRunWrite } from "./write-batch.js";
import type { WriteOperation } from "./write-operation.js";

/**
 * The cluster's run records: every run of every node in memory (loaded at start, then followed
 * through the change feed), this node's changes written through the writer in order, before the
 * status event that reports them. A run can change hands (posted by one node, claimed by another),
 * so a record from the feed replaces the one held only when it is newer: never while this node's
 * own write of the run waits, nor when this node's last write of it committed with a later change.
 */
export class PostgresRunRecords implements RunRecords {
  readonly #records = new RunRecordIndex();
  /** Which node wrote each run last: the one running it while it is unfinished. */
  readonly #nodes: Map<string, string>;
  readonly #writer: PostgresWriter;
  readonly #node: string;
  /** This node's writes of each run not committed yet. */
  readonly #pendingWrites = new Map<string, number>();
  /** The change number this node's last committed write of each run got. */
  readonly #committedChanges = new Map<string, bigint>();

  constructor(writer: PostgresWriter, loaded: RunRecord[], nodes: Map<string, string>, node: string) {
    this.#writer = writer;
    this.#nodes = nodes;
    this.#node = node;
    for (const record of loaded) this.#records.put(record);
  }

  nodeOf(id: string): string | undefined {
    return this.#nodes.get(id);
  }

  all(): RunRecord[] {
    return this.#records.all();
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
    this.#records.put(record);
    this.#nodes.set(record.id, this.#node);
  }

  save(record: RunRecord): void {
    this.#records.put(record);
    this.#nodes.set(record.id, this.#node);
    this.#writeStarted(record.id);
    this.#writer.enqueue({ kind: "run", record });
  }

  /** A record this node wrote in a transaction of its own (not the writer's), committed with `change`. */
  written(record: RunRecord, change: string): void {
    this.#records.put(record);
    this.#nodes.set(record.id, this.#node);
    this.#committedChanges.set(record.id, BigInt(change));
  }

  /**
   * A batch of the writer committed (with its change) or dropped. A run write the database refused
   * (another node holds the run now) leaves the record the database keeps, as the feed would.
   */
  settled(batch: WriteOperation[], change: string | undefined, refused: RefusedRunWrite[]): void {
    const kept = new Map(refused.map((write) => [write.record.id, write]));
    for (const operation of batch)
      if (operation.kind === "run")
        this.#writeSettled(operation.record.id, kept.has(operation.record.id) ? undefined : change);
    for (const { record, node, change: keptChange } of refused) {
      if (this.#pendingWrites.has(record.id)) continue;
      this.#records.put(record);
      this.#nodes.set(record.id, node);
      // The feed's older changes of the run must not replace it.
      this.#committedChanges.set(record.id, BigInt(keptChange));
    }
  }

  #writeStarted(id: string): void {
    this.#pendingWrites.set(id, (this.#pendingWrites.get(id) ?? 0) + 1);
  }

  #writeSettled(id: string, change: string | undefined): void {
    const left = (this.#pendingWrites.get(id) ?? 1) - 1;
    if (left <= 0) this.#pendingWrites.delete(id);
    else this.#pendingWrites.set(id, left);
    if (change !== undefined) this.#committedChanges.set(id, BigInt(change));
  }

  /** A record another node wrote (from the change feed), unless this node wrote the run since. */
  applyRemote(record: RunRecord, node: string, change: string): void {
    if (this.#pendingWrites.has(record.id)) return;
    if ((this.#committedChanges.get(record.id) ?? -1n) > BigInt(change)) return;
    this.#records.put(record);
    this.#nodes.set(record.id, node);
  }
}
