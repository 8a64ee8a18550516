import type pg from "pg";
import { type MemoryKey, memoryKeyText } from "../../memory/memory-key.js";
import type { MemoryStore, StoredMemory } from "../../memory/memory-store.js";
import { memoryVersion } from "../../memory/memory-version.js";

/** The version of a memory nobody wrote yet: the empty text's. */
const EMPTY_VERSION = memoryVersion("");

/**
 * A cluster's memories: one row per memory in `agentd_memories`, read when a run starts and written
 * by compare-and-set on the version column, so two nodes writing one memory at once never lose a
 * change (the loser reads again and retries, MemoryService). Straight on the pool, not through the
 * writer: a memory tool needs to know that its write landed before it answers the model.
 */
export class PostgresMemories implements MemoryStore {
  readonly #pool: pg.Pool;

  constructor(pool: pg.Pool) {
    this.#pool = pool;
  }

  async read(key: MemoryKey): Promise<StoredMemory> {
    const result = await this.#pool.query<{ content: string; version: string }>(
      "SELECT content, version FROM agentd_memories WHERE key = $1",
      [memoryKeyText(key)],
    );
    const row = result.rows[0];
    return row === undefined ? { content: "", version: EMPTY_VERSION } : row;
  }

  async replace(key: MemoryKey, content: string, expectedVersion: string): Promise<StoredMemory | undefined> {
    const version = memoryVersion(content);
    // An empty memory may have no row yet: the insert makes it, unless another node's row is there.
    const sql =
      expectedVersion === EMPTY_VERSION
        ? `INSERT INTO agentd_memories (key, content, version) VALUES ($1, $2, $3)
           ON CONFLICT (key) DO UPDATE SET content = EXCLUDED.content, version = EXCLUDED.version, updated_at = now()
           WHERE agentd_memories.version = $4 RETURNING key`
        : `UPDATE agentd_memories SET content = $2, version = $3, updated_at = now()
           WHERE key = $1 AND version = $4 RETURNING key`;
    const result = await this.#pool.query(sql, [memoryKeyText(key), content, version, expectedVersion]);
    return result.rowCount === 1 ? { content, version } : undefined;
  }
}
