import type pg from "pg";
import { AgentdError } from "../../errors/agentd-error.js";
import type { Logger } from "../../logging/logger.js";
import { isConnectionError } from "./connection-error.js";
import { spaceFailureOf } from "../../util/storage-gate.js";
import { type RefusedRunWrite, writeBatch } from "./write-batch.js";
import type { WriteOperation } from "./write-operation.js";

const BATCH_SIZE = 500;
const FIRST_RETRY_MILLISECONDS = 100;
const LONGEST_RETRY_MILLISECONDS = 5_000;
/** A batch the database rejects for itself (not for a lost connection) is tried this often. */
const ATTEMPTS_FOR_REJECTED_BATCH = 3;
/** SQLSTATE of a transaction rolled back to break a deadlock. */
const DEADLOCK_DETECTED = "40P01";

export interface PostgresWriterOptions {
  pool: pg.Pool;
  node: string;
  logger: Logger;
  /**
   * Called after each batch: committed with its change number (the change feed reads what was
   * written) and the run writes refused because another node holds the run now, or dropped
   * (`change` undefined) when PostgreSQL kept refusing it or the runs' fence dropped it.
   */
  onSettled: (
    batch: WriteOperation[],
    change: string | undefined,
    refused: RefusedRunWrite[],
    /** New runs of fires another node holds now: not written (see write-batch.ts). */
    stale: string[],
  ) => void;
  /**
   * Whether this node's cluster lease holds now (default: always). While it does not, nothing is
   * written (batches wait for `leaseChanged(true)`) and new work is refused as when the database
   * cannot be reached.
   */
  leaseHeld?: () => boolean;
}

/** A change that belongs to one run: dropped when this node lets its runs go (`fence`). */
function runScoped(operation: WriteOperation): boolean {
  if (operation.kind === "run") return operation.claimable !== true;
  if (operation.kind === "event") return typeof operation.draft.run === "string";
  return operation.kind === "checkpoint";
}

/**
 * Every change of this node, written in the order it was made: one writer, batches of whatever
 * queued up while the previous batch was written, one transaction each. When the database cannot
 * be reached, changes wait in memory and the batch is retried with back-off (runs in flight go on);
 * `connected` says so for /health.
 */
export class PostgresWriter {
  readonly #options: PostgresWriterOptions;
  readonly #queue: WriteOperation[] = [];
  readonly #drained: Array<() => void> = [];
  /** Callers of `write` waiting for their operation's commit (told the error when it was refused). */
  readonly #committed = new Map<WriteOperation, (refusal?: AgentdError) => void>();
  /** Callers of `committed` waiting for everything up to this operation. */
  readonly #barriers = new Map<WriteOperation, Array<() => void>>();
  #writing = false;
  #connected = true;
  #lastError: string | undefined;
  #closed = false;
  /** Operations at the head of the queue being written now. */
  #inFlight = 0;
  /** Called when the lease holds again (or the writer closes): the drain goes on. */
  #leaseBack: (() => void) | undefined;

  constructor(options: PostgresWriterOptions) {
    this.#options = options;
  }

  /** The database answers, and this node's lease holds. */
  get connected(): boolean {
    return this.#connected && this.#leaseHeld();
  }

  #leaseHeld(): boolean {
    return this.#options.leaseHeld?.() ?? true;
  }

  /** This node's lease holds again, or stopped holding: the drain goes on when it holds. */
  leaseChanged(held: boolean): void {
    if (!held) return;
    const goOn = this.#leaseBack;
    this.#leaseBack = undefined;
    goOn?.();
  }

  /**
   * This node let its runs go (its lease was lost): every change of a run queued and not yet being
   * written is dropped, so nothing it did with them lands once it joins again. What is being
   * written is left to the database's fence. Those changes' callers are never answered (their runs
   * are stopped); barriers on them are passed.
   */
  fence(): void {
    const kept: WriteOperation[] = [];
    const dropped: WriteOperation[] = [];
    for (const [index, operation] of this.#queue.entries()) {
      if (index >= this.#inFlight && runScoped(operation)) dropped.push(operation);
      else kept.push(operation);
    }
    if (dropped.length === 0) return;
    this.#queue.splice(0, this.#queue.length, ...kept);
    for (const operation of dropped) {
      this.#committed.delete(operation);
      for (const resolve of this.#barriers.get(operation) ?? []) resolve();
      this.#barriers.delete(operation);
    }
    this.#options.onSettled(dropped, undefined, [], []);
    this.#options.logger.warn(
      { dropped: dropped.length },
      "changes of runs this node let go were dropped before the database saw them",
    );
  }

  get lastError(): string | undefined {
    return this.#lastError;
  }

  get pending(): number {
    return this.#queue.length;
  }

  /**
   * Queues the operation. The batch is cut in a later microtask, so the changes a caller makes in
   * one synchronous step go in one transaction (a report's event and the settling of its fires).
   */
  enqueue(operation: WriteOperation): void {
    this.#queue.push(operation);
    if (this.#writing) return;
    this.#writing = true;
    queueMicrotask(() => void this.#drain());
  }

  /**
   * Queues the operation and resolves once it is committed; rejects at once with
   * STORE_UNAVAILABLE while the database cannot be reached (new work is refused, not parked).
   */
  write(operation: WriteOperation): Promise<void> {
    if (!this.connected) return Promise.reject(this.#unavailable());
    return new Promise((resolve, reject) => {
      this.#committed.set(operation, (refusal) => (refusal === undefined ? resolve() : reject(refusal)));
      this.enqueue(operation);
    });
  }

  /**
   * Queues the operation and resolves once it is committed, however long the database is away:
   * for a change the caller must not act before (a checkpoint before its tool calls run), where
   * waiting is right and refusing would fail the run.
   */
  durable(operation: WriteOperation): Promise<void> {
    return new Promise((resolve) => {
      this.#committed.set(operation, () => resolve());
      this.enqueue(operation);
    });
  }

  /**
   * Resolves once every change queued so far is committed (later ones are not waited for);
   * rejects at once with STORE_UNAVAILABLE while the database cannot be reached.
   */
  committed(): Promise<void> {
    const last = this.#queue.at(-1);
    if (last === undefined) return Promise.resolve();
    if (!this.connected) return Promise.reject(this.#unavailable());
    return new Promise((resolve) => {
      const waiting = this.#barriers.get(last) ?? [];
      waiting.push(resolve);
      this.#barriers.set(last, waiting);
    });
  }

  /**
   * What another connection learnt: the database went away (new work is refused from now on) or
   * is back. Queued changes are retried either way.
   */
  reachable(error: Error | undefined): void {
    if (error === undefined) {
      if (this.#queue.length === 0 && !this.#writing) {
        this.#connected = true;
        this.#lastError = undefined;
      }
      return;
    }
    this.#connected = false;
    this.#lastError = error.message;
  }

  /** Resolves once everything queued so far is written, or after `milliseconds`. */
  flushed(milliseconds: number): Promise<void> {
    if (this.#queue.length === 0 && !this.#writing) return Promise.resolve();
    return new Promise((resolve) => {
      const timer = setTimeout(resolve, milliseconds);
      this.#drained.push(() => {
        clearTimeout(timer);
        resolve();
      });
    });
  }

  /** Stops retrying; what is still queued is given up (logged). */
  close(): void {
    this.#closed = true;
    this.leaseChanged(true);
    if (this.#queue.length > 0) {
      this.#options.logger.error(
        { pending: this.#queue.length },
        "changes not written to PostgreSQL before stop",
      );
    }
  }

  #unavailable(): AgentdError {
    if (this.#connected)
      return new AgentdError(
        "STORE_UNAVAILABLE",
        "this node's cluster lease is not renewed: PostgreSQL did not answer in time",
        { hint: "GET /health shows the store; try again once it is connected, or on another node" },
      );
    return new AgentdError("STORE_UNAVAILABLE", "PostgreSQL cannot be reached right now", {
      hint: "GET /health shows the store; try again once it is connected",
      ...(this.#lastError === undefined ? {} : { details: { error: this.#lastError } }),
    });
  }

  #settle(batch: WriteOperation[], stale: ReadonlySet<string> = new Set()): void {
    for (const operation of batch) {
      const refused = operation.kind === "run" && stale.has(operation.record.id);
      this.#committed.get(operation)?.(refused ? staleFireRun(operation.record.agent) : undefined);
      this.#committed.delete(operation);
      for (const resolve of this.#barriers.get(operation) ?? []) resolve();
      this.#barriers.delete(operation);
    }
  }

  async #drain(): Promise<void> {
    this.#writing = true;
    let delay = FIRST_RETRY_MILLISECONDS;
    let attempts = 0;
    while (this.#queue.length > 0 && !this.#closed) {
      // Past this node's lease deadline nothing is written: its runs may be another node's now.
      if (!this.#leaseHeld()) {
        await new Promise<void>((resolve) => {
          this.#leaseBack = resolve;
        });
        continue;
      }
      let size = Math.min(BATCH_SIZE, this.#queue.length);
      // Fires settled by a report commit with the report's event before them, never after it.
      while (this.#queue[size]?.kind === "fires_settled") size += 1;
      const batch = this.#queue.slice(0, size);
      this.#inFlight = batch.length;
      try {
        let written: Awaited<ReturnType<typeof writeBatch>>;
        const client = await this.#options.pool.connect();
        try {
          written = await writeBatch(client, this.#options.node, batch);
        } catch (error) {
          // A connection whose query timed out may still be in the middle of it: never reused.
          client.release(true);
          throw error;
        }
        client.release();
        this.#inFlight = 0;
        this.#queue.splice(0, batch.length);
        this.#settle(batch, new Set(written.stale));
        if (!this.#connected) this.#options.logger.info("PostgreSQL reachable again; queued changes written");
        this.#connected = true;
        this.#lastError = undefined;
        delay = FIRST_RETRY_MILLISECONDS;
        attempts = 0;
        this.#options.onSettled(batch, written.change, written.refused, written.stale);
      } catch (error) {
        this.#inFlight = 0;
        // Two writers locking rows of the same runs in another order (a sweep, a claim): PostgreSQL
        // chose this batch to roll back; it is simply written again.
        if ((error as { code?: unknown }).code === DEADLOCK_DETECTED) continue;
        attempts += 1;
        const message = error instanceof Error ? error.message : String(error);
        // A full disk or a read-only database (53100, 25006) is waited out like a lost connection.
        const waitable = isConnectionError(error) || spaceFailureOf(error) !== undefined;
        if (!waitable && attempts >= ATTEMPTS_FOR_REJECTED_BATCH) {
          this.#options.logger.error(
            { err: error, operations: batch.length },
            "PostgreSQL rejected a batch of changes; dropped",
          );
          this.#queue.splice(0, batch.length);
          this.#settle(batch);
          this.#options.onSettled(batch, undefined, [], []);
          attempts = 0;
          continue;
        }
        if (this.#connected)
          this.#options.logger.warn({ err: error }, "cannot write to PostgreSQL; retrying with back-off");
        this.#connected = false;
        this.#lastError = message;
        await new Promise((resolve) => setTimeout(resolve, delay).unref());
        delay = Math.min(delay * 2, LONGEST_RETRY_MILLISECONDS);
      }
    }
    this.#writing = false;
    for (const resolve of this.#drained.splice(0)) resolve();
  }
}

/**
 * The refusal of a new run whose schedule fire another node took over: the caller (the scheduler)
 * hands the fire back to the sweep, which finds it another node's and leaves it to that node.
 */
function staleFireRun(agent: string): AgentdError {
  return new AgentdError(
    "STORE_WRITE_FAILED",
    `the run of a schedule fire of ${agent} was not recorded: another node took the fire over while this node was taken for dead`,
    { hint: "nothing to do: the other node runs or reports the fire" },
  );
}
