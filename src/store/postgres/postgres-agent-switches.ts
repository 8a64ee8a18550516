import type pg from "pg";
import { type SwitchNote, SwitchNoteSchema } from "../../definitions/switch-note.js";
import type { SwitchStore } from "../../definitions/switch-store.js";

/** Migration 17: one row per agent an operator turned off. */
export const AGENT_SWITCHES_SQL = `
  CREATE TABLE agentd_agent_switches (
    agent text PRIMARY KEY,
    disabled_by text NOT NULL,
    disabled_at text NOT NULL
  );
`;

/**
 * The operators' switches of a cluster in `agentd_agent_switches`: a switch made on one node holds
 * on every node. The table holds a row per disabled agent, a handful: each node reads it whole every
 * second (`shared`), which sees each change once committed (a counter read apart from the rows could
 * be seen ahead of a commit, and the change then missed).
 */
export class PostgresAgentSwitches implements SwitchStore {
  readonly shared = true;
  readonly #pool: pg.Pool;
  readonly #ownsPool: boolean;

  /** `ownsPool`: the pool is this store's alone, ended by `close`. */
  constructor(pool: pg.Pool, ownsPool = false) {
    this.#pool = pool;
    this.#ownsPool = ownsPool;
  }

  async load(): Promise<Map<string, SwitchNote>> {
    const result = await this.#pool.query<{ agent: string; disabled_by: string; disabled_at: string }>(
      "SELECT agent, disabled_by, disabled_at FROM agentd_agent_switches",
    );
    return new Map(
      result.rows.map((row) => [
        row.agent,
        SwitchNoteSchema.parse({ by: row.disabled_by, at: row.disabled_at }),
      ]),
    );
  }

  async write(agentId: string, note: SwitchNote | undefined): Promise<boolean> {
    const result =
      note === undefined
        ? await this.#pool.query("DELETE FROM agentd_agent_switches WHERE agent = $1", [agentId])
        : await this.#pool.query(
            `INSERT INTO agentd_agent_switches (agent, disabled_by, disabled_at) VALUES ($1, $2, $3)
             ON CONFLICT (agent) DO NOTHING`,
            [agentId, note.by, note.at],
          );
    return (result.rowCount ?? 0) > 0;
  }

  async close(): Promise<void> {
    if (this.#ownsPool) await this.#pool.end();
  }
}
