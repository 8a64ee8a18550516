import { AuditRecorder } from "../access/audit-recorder.js";
import type { AuditLog } from "../access/audit-log.js";
import { FilesAuditLog } from "../access/files-audit-log.js";
import { FilesTokenStore } from "../access/files-token-store.js";
import type { TokenStore } from "../access/token-store.js";
import type { Clock } from "../clock/clock.js";
import type { Config } from "../config/config-schema.js";
import type { EventDraft } from "../events/agent-event.js";
import type { Logger } from "../logging/logger.js";

/** Where the named tokens and the audit trail are kept: beside the rest of the store. */
export interface AccessStores {
  tokens: TokenStore;
  audit: AuditLog;
  close(): Promise<void>;
}

export interface OpenAccessStoresOptions {
  config: Config;
  logger: Logger;
  clock?: Clock;
  /** The node of the cluster, recorded in each audit entry. */
  node?: string;
}

/**
 * The token store and the audit log of config `store.backend`: `<data_dir>/tokens.json` and
 * `<data_dir>/audit/`, or the PostgreSQL tables of migration 11 (over a small pool of their own).
 */
export async function openAccessStores(options: OpenAccessStoresOptions): Promise<AccessStores> {
  const { config, logger } = options;
  const at = {
    ...(options.clock ? { clock: options.clock } : {}),
    ...(options.node ? { node: options.node } : {}),
  };
  if (config.store.backend === "postgres" && config.store.url !== undefined) {
    const { default: pg } = await import("pg");
    const { migrate } = await import("./postgres/migrations.js");
    const { PostgresTokenStore } = await import("./postgres/postgres-token-store.js");
    const { PostgresAuditLog } = await import("./postgres/postgres-audit-log.js");
    const pool = new pg.Pool({ connectionString: config.store.url, max: 2 });
    pool.on("error", (error) => logger.warn({ err: error }, "a PostgreSQL connection was lost"));
    try {
      await migrate(pool);
    } catch (error) {
      await pool.end().catch(() => undefined);
      throw error;
    }
    return {
      tokens: new PostgresTokenStore(pool),
      audit: new PostgresAuditLog(pool, at),
      close: () => pool.end(),
    };
  }
  const audit = new FilesAuditLog(config.data_dir, { ...at, logger: logger.child({ module: "audit" }) });
  return { tokens: new FilesTokenStore(config.data_dir), audit, close: () => audit.close() };
}

/** An audit recorder on the store of `config`, for a command that acts without the daemon. */
export async function openAuditRecorder(
  options: OpenAccessStoresOptions & { publish?: (draft: EventDraft) => void },
): Promise<{ recorder: AuditRecorder; close(): Promise<void> }> {
  const stores = await openAccessStores(options);
  const recorder = new AuditRecorder({
    log: stores.audit,
    logger: options.logger,
    ...(options.publish ? { publish: options.publish } : {}),
  });
  return { recorder, close: () => stores.close() };
}
