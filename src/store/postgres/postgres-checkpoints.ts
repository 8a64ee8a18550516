import type { CheckpointRecords } from "../../checkpoints/checkpoint-records.js";
import { type Checkpoint, CheckpointSchema, type RunCheckpoints } from "../../checkpoints/checkpoint.js";
import { parseJsonAs } from "../../schema/parse-json-as.js";
import type { PostgresWriter } from "./postgres-writer.js";

/**
 * Checkpoints in PostgreSQL, written through the writer. In memory: the checkpoints this node's
 * runs save, and those of the runs that could be resumed when the node started (loaded with its
 * snapshot). A run resumed on another node's behalf gets its checkpoint with the claim (the queue).
 */
export class PostgresCheckpoints implements CheckpointRecords {
  readonly #checkpoints: Map<string, Checkpoint>;
  readonly #writer: PostgresWriter;
  readonly #now: () => Date;

  constructor(options: { writer: PostgresWriter; now: () => Date }, loaded: Checkpoint[]) {
    this.#writer = options.writer;
    this.#now = options.now;
    this.#checkpoints = new Map(loaded.map((checkpoint) => [checkpoint.run, checkpoint]));
  }

  forRun(run: string, resumeFrom?: Checkpoint): RunCheckpoints {
    return {
      resumeFrom,
      save: (state) => {
        const checkpoint: Checkpoint = { run, ...state, saved_at: this.#now().toISOString() };
        this.#checkpoints.set(run, checkpoint);
        // Committed before the worker runs the round's tools: a call is never run again on resume.
        return this.#writer.durable({ kind: "checkpoint", run, checkpoint });
      },
    };
  }

  load(run: string): Checkpoint | undefined {
    return this.#checkpoints.get(run);
  }

  /** Runs pruned from the database (their checkpoints with them): not held either. */
  forget(runs: Iterable<string>): void {
    for (const run of runs) this.#checkpoints.delete(run);
  }

  remove(run: string): void {
    this.#checkpoints.delete(run);
    this.#writer.enqueue({ kind: "checkpoint", run, checkpoint: undefined });
  }
}

/**
 * A checkpoint as `agentd_checkpoints` keeps it: JSON text (not jsonb, which refuses the `\u0000`
 * that separates a recent call's name from its arguments). Undefined when absent or unreadable.
 */
export function parseCheckpoint(text: string | undefined): Checkpoint | undefined {
  return parseJsonAs(CheckpointSchema, text);
}
