import path from "node:path";
import { CheckpointStore } from "../checkpoints/checkpoint-store.js";
import { FileEventLog } from "../events/file-event-log.js";
import type { Logger } from "../logging/logger.js";
import { isPastRetention } from "../retention/retention-policy.js";
import { RunStore } from "../runs/run-store.js";
import { ScheduleState } from "../scheduler/schedule-state.js";
import { flushesSettled } from "../util/flush-to-device.js";
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
 * `cli-cooldowns.json`). Events are appended before they are published; run records and
 * checkpoints are rewritten off the event loop and served once on disk. One daemon per folder
 * (the data_dir lock).
 */
export function openFilesStore(options: FilesStoreOptions): DurableStore {
  const { dataDirectory, logger } = options;
  // schedules.json is rewritten on the event loop: no file is created there.
  const spares = new SpareFiles(path.join(dataDirectory, "spare"));
  const runs = RunStore.open({ dataDirectory, logger: logger.child({ module: "runs" }) });
  const checkpoints = new CheckpointStore({
    dataDirectory,
    logger: logger.child({ module: "checkpoints" }),
    ...(options.now ? { now: options.now } : {}),
  });
  const events = new FileEventLog({ dataDirectory, logger: logger.child({ module: "events" }) });
  const committed = async () => {
    await Promise.all([runs.settled(), checkpoints.settled()]);
  };
  return {
    backend: "files",
    runs,
    events,
    schedules: ScheduleState.load(path.join(dataDirectory, "schedules.json"), logger, spares),
    checkpoints,
    cooldowns: new CliCooldowns({
      file: path.join(dataDirectory, COOLDOWNS_FILE_NAME),
      logger: logger.child({ module: "cli" }),
      ...(options.now ? { now: options.now } : {}),
    }),
    health: () => ({
      backend: "files",
      connected: true,
      pending_writes: runs.pendingWrites + checkpoints.pendingWrites,
    }),
    committed,
    start: () => Promise.resolve(),
    prune: async (policyOf, now) => {
      const pruned = await runs.prune((line, rank) => isPastRetention(policyOf(line.agent), line, rank, now));
      const segments = events.pruneSegments((agent) => policyOf(agent).days, now);
      return { runs: pruned.length, segments };
    },
    close: async () => {
      await committed();
      runs.close();
      await Promise.all([spares.close(), flushesSettled()]);
    },
  };
}
