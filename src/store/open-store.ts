import type { Config } from "../config/config-schema.js";
import type { Logger } from "../logging/logger.js";
import type { DurableStore } from "./durable-store.js";
import { openFilesStore } from "./files-store.js";

export interface OpenStoreOptions {
  config: Config;
  logger: Logger;
  now?: () => Date;
}

/** The store config `store.backend` names, opened and ready. */
export async function openStore(options: OpenStoreOptions): Promise<DurableStore> {
  const { config } = options;
  return openFilesStore({
    dataDirectory: config.data_dir,
    logger: options.logger,
    ...(options.now ? { now: options.now } : {}),
  });
}
