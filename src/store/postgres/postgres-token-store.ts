import type pg from "pg";
import { type TokenRecord, TokenRecordSchema } from "../../access/api-token.js";
import type { TokenStore } from "../../access/token-store.js";
import { AgentdError } from "../../errors/agentd-error.js";

/**
 * Named tokens in `agentd_tokens`, shared by every node of the cluster. Each change also advances
 * the sequence `agentd_token_changes`: `version` reads it, so a node polls one number a second and
 * reads the tokens only after a change. The sequence moves in the change's statement and again once
 * it has committed: a sequence is not transactional, so a node that read the first move and the
 * tokens before the commit (the old list, under the new number) reads them again at the second.
 */
export class PostgresTokenStore implements TokenStore {
  readonly #pool: pg.Pool;

  constructor(pool: pg.Pool) {
    this.#pool = pool;
  }

  async list(): Promise<TokenRecord[]> {
    const result = await this.#pool.query<Record<string, unknown>>(
      "SELECT name, role, hash, created_at, created_by FROM agentd_tokens ORDER BY name",
    );
    return result.rows.flatMap((row) => {
      const parsed = TokenRecordSchema.safeParse({ ...row, created_by: row["created_by"] ?? undefined });
      return parsed.success ? [parsed.data] : [];
    });
  }

  async create(record: TokenRecord): Promise<void> {
    try {
      await this.#pool.query(
        `WITH changed AS (SELECT nextval('agentd_token_changes'))
         INSERT INTO agentd_tokens (name, role, hash, created_at, created_by)
         SELECT $1, $2, $3, $4, $5 FROM changed`,
        [record.name, record.role, record.hash, record.created_at, record.created_by ?? null],
      );
    } catch (error) {
      if ((error as { code?: string }).code === "23505") {
        throw new AgentdError("CONFLICT", `a token named "${record.name}" exists`, {
          field: "name",
          hint: "pick another name, or revoke the old token first",
        });
      }
      throw error;
    }
    await this.#committed();
  }

  async revoke(name: string): Promise<boolean> {
    const result = await this.#pool.query(
      `WITH changed AS (SELECT nextval('agentd_token_changes'))
       DELETE FROM agentd_tokens WHERE name = $1 AND EXISTS (SELECT 1 FROM changed)`,
      [name],
    );
    const revoked = (result.rowCount ?? 0) > 0;
    if (revoked) await this.#committed();
    return revoked;
  }

  /**
   * Moves the change counter after a change committed (see the class comment). A failure here does
   * not undo the change nor hide it (the counter moved with it): it is not reported as the change's.
   */
  async #committed(): Promise<void> {
    await this.#pool.query("SELECT nextval('agentd_token_changes')").catch(() => undefined);
  }

  async version(): Promise<string> {
    // last_value of a sequence is read without a lock and never rolls back.
    const result = await this.#pool.query<{ last_value: string; is_called: boolean }>(
      "SELECT last_value, is_called FROM agentd_token_changes",
    );
    const row = result.rows[0];
    return row === undefined ? "0" : `${row.last_value}:${row.is_called}`;
  }
}
