import type pg from "pg";
import type { CheckpointRecords } from "../../checkpoints/checkpoint-records.js";
import { type Checkpoint, CheckpointSchema, type RunCheckpoints } from "../../checkpoints/checkpoint.js";
import type { PostgresWriter } from "./postgres-writer.js";

/** Checkpoints in PostgreSQL: this node's runs' checkpoints in memory, written through the writer. */
export class PostgresCheckpoints implements CheckpointRecords {
  readonly #checkpoints = new Map<string, Checkpoint>();
  readonly #writer: PostgresWriter;
  readonly #pool: pg.Pool;
  readonly #now: () => Date;

  constructor(options: { writer: PostgresWriter; pool: pg.Pool; now: () => Date }) {
    this.#writer = options.writer;
    this.#pool = options.pool;
    this.#now = options.now;
  }

  forRun(run: string, resumeFrom?: Checkpoint): RunCheckpoints {
    return {
      resumeFrom,
      save: (state) => {
        const checkpoint: Checkpoint = { run, ...state, saved_at: this.#now().toISOString() };
        this.#checkpoints.set(run, checkpoint);
        this.#writer.enqueue({ kind: "checkpoint", run, checkpoint });
      },
    };
  }

  load(run: string): Checkpoint | undefined {
    return this.#checkpoints.get(run);
  }

  remove(run: string): void {
    this.#checkpoints.delete(run);
    this.#writer.enqueue({ kind: "checkpoint", run, checkpoint: undefined });
  }

  /** Reads a run's checkpoint from the database (a run of a dead node, about to be resumed here). */
  async fetch(run: string): Promise<Checkpoint | undefined> {
    const result = await this.#pool.query<{ checkpoint: unknown }>(
      "SELECT checkpoint FROM agentd_checkpoints WHERE run = $1",
      [run],
    );
    const parsed = CheckpointSchema.safeParse(result.rows[0]?.checkpoint);
    if (!parsed.success) return undefined;
    this.#checkpoints.set(run, parsed.data);
    return parsed.data;
  }
}
