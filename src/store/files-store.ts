import path from "node:path";
import { CheckpointStore } from "../checkpoints/checkpoint-store.js";
import { FileEventLog } from "../events/file-event-log.js";
import type { Logger } from "../logging/logger.js";
import { RunStore } from "../runs/run-store.js";
import { ScheduleState } from "../scheduler/schedule-state.js";
import { SpareFiles } from "../util/spare-files.js";
import { COOLDOWNS_FILE_NAME, CliCooldowns } from "../workers/cli/cli-cooldowns.js";
import type { DurableStore } from "./durable-store.js";

export interface FilesStoreOptions {
  dataDirectory: string;
  logger: Logger;
  now?: () => Date;
}

/**
 * The default store: files in `data_dir` (`runs/`, `events/`, `schedules.json`, `checkpoints/`,
 * `cli-cooldowns.json`),
 * written synchronously, so a record or an event is on disk when the call returns. One daemon per
 * folder (the data_dir lock).
 */
export function openFilesStore(options: FilesStoreOptions): DurableStore {
  const { dataDirectory, logger } = options;
  // Records, checkpoints and schedules.json are rewritten on the event loop: no file is created there.
  const spares = new SpareFiles(path.join(dataDirectory, "spare"));
  return {
    backend: "files",
    runs: RunStore.open({ dataDirectory, logger: logger.child({ module: "runs" }), spares }),
    events: new FileEventLog({ dataDirectory, logger: logger.child({ module: "events" }) }),
    schedules: ScheduleState.load(path.join(dataDirectory, "schedules.json"), logger, spares),
    checkpoints: new CheckpointStore({
      dataDirectory,
      logger: logger.child({ module: "checkpoints" }),
      spares,
      ...(options.now ? { now: options.now } : {}),
    }),
    cooldowns: new CliCooldowns({
      file: path.join(dataDirectory, COOLDOWNS_FILE_NAME),
      logger: logger.child({ module: "cli" }),
      ...(options.now ? { now: options.now } : {}),
    }),
    health: () => ({ backend: "files", connected: true, pending_writes: 0 }),
    start: () => Promise.resolve(),
    close: () => spares.close(),
  };
}
