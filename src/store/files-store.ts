import path from "node:path";
import { CheckpointStore } from "../checkpoints/checkpoint-store.js";
import { FileEventLog } from "../events/file-event-log.js";
import type { Logger } from "../logging/logger.js";
import { RunStore } from "../runs/run-store.js";
import { ScheduleState } from "../scheduler/schedule-state.js";
import type { DurableStore } from "./durable-store.js";

export interface FilesStoreOptions {
  dataDirectory: string;
  logger: Logger;
  now?: () => Date;
}

/**
 * The default store: files in `data_dir` (`runs/`, `events/`, `schedules.json`, `checkpoints/`),
 * written synchronously, so a record or an event is on disk when the call returns. One daemon per
 * folder (the data_dir lock).
 */
export function openFilesStore(options: FilesStoreOptions): DurableStore {
  const { dataDirectory, logger } = options;
  return {
    backend: "files",
    runs: RunStore.open({ dataDirectory, logger: logger.child({ module: "runs" }) }),
    events: new FileEventLog({ dataDirectory, logger: logger.child({ module: "events" }) }),
    schedules: ScheduleState.load(path.join(dataDirectory, "schedules.json"), logger),
    checkpoints: new CheckpointStore({
      dataDirectory,
      logger: logger.child({ module: "checkpoints" }),
      ...(options.now ? { now: options.now } : {}),
    }),
    health: () => ({ backend: "files", connected: true, pending_writes: 0 }),
    start: () => Promise.resolve(),
    close: () => Promise.resolve(),
  };
}
