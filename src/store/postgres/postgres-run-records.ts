import type { RunRecord } from "../../runs/run-record.js";
import { RunRecordIndex } from "../../runs/run-record-index.js";
import type { RunRecords } from "../../runs/run-records.js";
import type { PostgresWriter } from "./postgres-writer.js";

/**
 * The cluster's run records: every run of every node in memory (loaded at start, then followed
 * through the change feed), this node's changes written through the writer in order, before the
 * status event that reports them.
 */
export class PostgresRunRecords implements RunRecords {
  readonly #records = new RunRecordIndex();
  /** Which node wrote each run last: the one running it while it is unfinished. */
  readonly #nodes: Map<string, string>;
  readonly #writer: PostgresWriter;
  readonly #node: string;

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

  lastOf(agentId: string): RunRecord | undefined {
    return this.#records.lastOf(agentId);
  }

  /** Listed once committed, like the files store's: nothing reports a run a crash could lose. */
  async create(record: RunRecord): Promise<void> {
    await this.#writer.write({ kind: "run", record });
    this.#records.put(record);
    this.#nodes.set(record.id, this.#node);
  }

  save(record: RunRecord): void {
    this.#records.put(record);
    this.#nodes.set(record.id, this.#node);
    this.#writer.enqueue({ kind: "run", record });
  }

  /** A record another node wrote (from the change feed). */
  applyRemote(record: RunRecord, node: string): void {
    this.#records.put(record);
    this.#nodes.set(record.id, node);
  }
}
