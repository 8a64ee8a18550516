import { rename } from "node:fs/promises";
import type { Config } from "../config/config-schema.js";
import { AgentSwitches } from "../definitions/agent-switches.js";
import { agentSwitchesFile, readSwitchesFile } from "../definitions/files-switch-store.js";
import type { Logger } from "../logging/logger.js";

/**
 * The operators' switches of config `store.backend`: `<data_dir>/agent-switches.json` for one
 * daemon, or with PostgreSQL the cluster's table (migration 17, over a pool of one connection),
 * followed each second so a switch made on any node holds on all of them. A switches file this
 * data_dir kept before it joined a cluster is moved into the table once (an agent another node
 * already switched keeps that note) and renamed `agent-switches.json.imported`.
 */
export async function openAgentSwitches(
  config: Config,
  logger: Logger,
  options: { importFile?: boolean } = {},
): Promise<AgentSwitches> {
  if (config.store.backend !== "postgres" || config.store.url === undefined) {
    return AgentSwitches.open(config.data_dir);
  }
  const { default: pg } = await import("pg");
  const { migrate } = await import("./postgres/migrations.js");
  const { PostgresAgentSwitches } = await import("./postgres/postgres-agent-switches.js");
  const pool = new pg.Pool({ connectionString: config.store.url, max: 1 });
  pool.on("error", (error) => logger.warn({ err: error }, "a PostgreSQL connection was lost"));
  try {
    await migrate(pool);
    const store = new PostgresAgentSwitches(pool, true);
    const file = agentSwitchesFile(config.data_dir);
    const before = options.importFile === false ? undefined : readSwitchesFile(file);
    if (before !== undefined) {
      for (const [agent, note] of before) await store.write(agent, note);
      await rename(file, `${file}.imported`);
      logger.info({ file, agents: [...before.keys()] }, "agent switches moved into the cluster's database");
    }
    return await AgentSwitches.follow(store, { logger });
  } catch (error) {
    await pool.end().catch(() => undefined);
    throw error;
  }
}
