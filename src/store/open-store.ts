import type { Clock } from "../clock/clock.js";
import type { Config } from "../config/config-schema.js";
import type { Logger } from "../logging/logger.js";
import type { RetentionPolicy } from "../config/retention-policy.js";
import type { DurableStore } from "./durable-store.js";
import { openFilesStore } from "./files-store.js";

export interface OpenStoreOptions {
  config: Config;
  logger: Logger;
  now?: () => Date;
  /** Renews the cluster lease (PostgreSQL; default: the system clock). */
  clock?: Clock;
  /** Each agent's retention policy (config `retention:` and its agent file); default DEFAULT_RETENTION. */
  retention?: (agentId: string) => RetentionPolicy;
}

/** The store config `store.backend` names, opened and ready. */
export async function openStore(options: OpenStoreOptions): Promise<DurableStore> {
  const { config } = options;
  if (config.store.backend === "postgres" && config.store.url !== undefined) {
    // Loaded only for this backend: the pg driver is not worth its start-up cost otherwise.
    const { openPostgresStore } = await import("./postgres/postgres-store.js");
    return openPostgresStore({
      url: config.store.url,
      leaseMilliseconds: config.store.lease,
      bufferSize: config.events.buffer_size,
      logger: options.logger,
      ...(options.now ? { now: options.now } : {}),
      ...(options.clock ? { clock: options.clock } : {}),
      ...(options.retention ? { retention: options.retention } : {}),
    });
  }
  return openFilesStore({
    dataDirectory: config.data_dir,
    logger: options.logger,
    probeIntervalMilliseconds: config.store.probe_interval,
    ...(options.now ? { now: options.now } : {}),
  });
}
