import type { CheckpointRecords } from "./checkpoint-records.js";

/**
 * Checkpoints whose every string is masked before it is kept, as events are: tool outputs reach the
 * conversation masked already, but what the model writes itself (its text, a tool call's
 * arguments) and the task may hold a secret's value, and the checkpoint is written to `data_dir`
 * or the shared database. A resumed run continues from the masked conversation.
 */
export function maskingCheckpoints(
  records: CheckpointRecords,
  redactValue: <Value>(value: Value) => Value,
): CheckpointRecords {
  return {
    forRun: (run, resumeFrom) => {
      const checkpoints = records.forRun(run, resumeFrom);
      return {
        resumeFrom: checkpoints.resumeFrom,
        save: (checkpoint) => checkpoints.save(redactValue(checkpoint)),
      };
    },
    load: (run) => records.load(run),
    remove: (run) => records.remove(run),
  };
}
