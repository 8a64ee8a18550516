import type { AgentDefinition } from "../definitions/agent-definition.js";
import type { Worker } from "../workers/worker.js";

/** What a run follows of the store's state: full or not, and each change. */
export interface StorageWatch {
  readonly full: boolean;
  onChange(listener: (full: boolean) => void): () => void;
  /** Resolves once the store can write; rejects when it closes while still full. */
  whenWritable(): Promise<void>;
}

/**
 * Workers whose runs halt while the store is full: each run's control is held (as if paused: the
 * LLM loop waits before its next model call, a CLI worker's process tree is stopped, the timeout
 * clock stops) from the moment the store fills up until it has room again, apart from any pause a
 * user asked for. What the run was doing when the store filled up finishes and waits to be written
 * (its events are held in order by the bus, its checkpoint and record wait for room): the run
 * halts at its next durable step and loses nothing. A run that ended while the store was full
 * (its worker had finished before it could be halted) hands its outcome on only once the store has
 * room: its events are held until then, and the record of its end, small enough to fit where they
 * did not, would otherwise land before them (a kill -9 then left a completed run whose log lacks
 * its last events and its end).
 */
export function haltingWhileStorageFull(
  workerFor: (definition: AgentDefinition) => Worker,
  storage: StorageWatch,
): (definition: AgentDefinition) => Worker {
  return (definition) => {
    const worker = workerFor(definition);
    return {
      run: async (context) => {
        const { control } = context;
        const follow = (full: boolean) => (full ? control.holdForStorage() : control.releaseStorage());
        const stopFollowing = storage.onChange(follow);
        if (storage.full) control.holdForStorage();
        try {
          return await worker.run(context);
        } finally {
          stopFollowing();
          control.releaseStorage();
          await roomForTheEnd(storage);
        }
      },
    };
  };
}

/** Waits while the store is full (held events are written first, in order, once it has room). */
async function roomForTheEnd(storage: StorageWatch): Promise<void> {
  while (storage.full) {
    try {
      await storage.whenWritable();
    } catch {
      // The daemon stops while full: the end is given up with what is held (found crashed at the next start).
      return;
    }
  }
}
