import type { AgentDefinition } from "../definitions/agent-definition.js";
import type { Worker } from "../workers/worker.js";

/** What a run follows of the store's state: full or not, and each change. */
export interface StorageWatch {
  readonly full: boolean;
  onChange(listener: (full: boolean) => void): () => void;
}

/**
 * Workers whose runs halt while the store is full: each run's control is held (as if paused: the
 * LLM loop waits before its next model call, a CLI worker's process tree is stopped, the timeout
 * clock stops) from the moment the store fills up until it has room again, apart from any pause a
 * user asked for. What the run was doing when the store filled up finishes and waits to be written
 * (its events are held in order by the bus, its checkpoint and record wait for room): the run
 * halts at its next durable step and loses nothing.
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
        }
      },
    };
  };
}
