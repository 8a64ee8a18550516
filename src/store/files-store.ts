import path from "node:path";
import { CheckpointStore } from "../checkpoints/checkpoint-store.js";
import { EventBus } from "../events/event-bus.js";
import { FileEventLog } from "../events/file-event-log.js";
import type { RunToCheck } from "../events/load-agent-logs.js";
import type { Logger } from "../logging/logger.js";
import { localRunQueue } from "../runs/queue/local-run-queue.js";
import { isPastRetention } from "../config/retention-policy.js";
import { RunStore } from "../runs/run-store.js";
import { ScheduleState } from "../scheduler/schedule-state.js";
import { flushesSettled } from "../util/flush-to-device.js";
import { SpareFiles } from "../util/spare-files.js";
import { probeFolder } from "./storage-probe.js";
import { StorageState } from "./storage-state.js";
import { COOLDOWNS_FILE_NAME, CliCooldowns } from "../workers/cli/cli-cooldowns.js";
import type { DurableStore } from "./durable-store.js";
import { singleNodeMembership } from "./single-node-membership.js";

export interface FilesStoreOptions {
  dataDirectory: string;
  logger: Logger;
  now?: () => Date;
  /** Time between two probes of a full data_dir (config `store.probe_interval`). */
  probeIntervalMilliseconds?: number;
}

/** Spare run logs kept ready: the launches of one fire (20 agents due together) take one each. */
const SPARE_RUN_LOGS = 32;
/** A fire's launches have sent their first model requests well within this: spares are made after. */
const SPARE_RUN_LOGS_REFILL_DELAY_MILLISECONDS = 200;

/**
 * The default store: files in `data_dir` (`runs/`, `events/`, `schedules.json`, `checkpoints/`,
 * `cli-cooldowns.json`). Events are appended before they are published; run records and
 * checkpoints are rewritten off the event loop and served once on disk. One daemon per folder
 * (the data_dir lock). A write that fails for lack of space makes `storage` full: what could not
 * be written waits for room (see StorageState), probed in data_dir.
 */
export function openFilesStore(options: FilesStoreOptions): DurableStore {
  const { dataDirectory, logger } = options;
  // schedules.json is rewritten on the event loop: no file is created there.
  const spares = new SpareFiles(path.join(dataDirectory, "spare"));
  // New runs' logs: renamed into place at a launch, made again once the launches of a fire are over.
  const spareRunLogs = new SpareFiles(
    path.join(dataDirectory, "spare-run-logs"),
    SPARE_RUN_LOGS,
    SPARE_RUN_LOGS_REFILL_DELAY_MILLISECONDS,
  );
  const storage = new StorageState({
    probe: (bytes) => probeFolder(dataDirectory, bytes),
    root: dataDirectory,
    logger: logger.child({ module: "store" }),
    ...(options.probeIntervalMilliseconds === undefined
      ? {}
      : { probeIntervalMilliseconds: options.probeIntervalMilliseconds }),
    ...(options.now ? { now: options.now } : {}),
  });
  const runs = RunStore.open({ dataDirectory, logger: logger.child({ module: "runs" }), storage });
  const checkpoints = new CheckpointStore({
    dataDirectory,
    logger: logger.child({ module: "checkpoints" }),
    storage,
    ...(options.now ? { now: options.now } : {}),
  });
  const events = new FileEventLog({
    dataDirectory,
    logger: logger.child({ module: "events" }),
    runsToCheck: () => runsToCheckOf(runs),
    spareRunLogs,
  });
  const committed = async () => {
    await Promise.all([runs.settled(), checkpoints.settled()]);
  };
  return {
    backend: "files",
    runs,
    events,
    schedules: ScheduleState.load(path.join(dataDirectory, "schedules.json"), logger, {
      spares,
      storage,
      ...(options.now ? { now: options.now } : {}),
    }),
    storage,
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
    createBus: (busOptions) => new EventBus(busOptions),
    cluster: singleNodeMembership(),
    runQueue: localRunQueue,
    start: () => Promise.resolve(),
    prune: async (policyOf, now) => {
      const pruned = await runs.prune((line, rank) => isPastRetention(policyOf(line.agent), line, rank, now));
      const segments = events.pruneSegments((agent) => policyOf(agent).days, now);
      return { runs: pruned.length, segments };
    },
    close: async () => {
      // Writes waiting for room give up now: a stop while full does not wait for space.
      storage.close();
      await committed();
      runs.close();
      checkpoints.close();
      await Promise.all([spares.close(), spareRunLogs.close(), flushesSettled()]);
    },
  };
}

/**
 * The runs whose logs the event logs' start reads the ends of, for ids an agent's log lost: the
 * unfinished ones and each agent's newest (the only ones that may have written after their agent's
 * log was last flushed to the device).
 */
function runsToCheckOf(runs: RunStore): RunToCheck[] {
  const checked = new Map<string, RunToCheck>();
  for (const record of [...runs.unfinished(), ...runs.newestOfEveryAgent()]) {
    checked.set(record.id, { run: record.id, agent: record.agent });
  }
  return [...checked.values()];
}
