import type pg from "pg";
import { ACCESS_TABLES_SQL, AUDIT_RETENTION_SQL } from "./access-tables.js";
import { DELIVERY_TABLES_SQL } from "./delivery-tables.js";
import { PER_AGENT_ORDER_SQL } from "./per-agent-order-migration.js";
import { AGENT_SWITCHES_SQL } from "./postgres-agent-switches.js";
import { NOTABLE_EVENTS_SQL, QUEUE_ORDER_SQL } from "./queue-order-migration.js";
import { TRIGGER_START_TABLES_SQL } from "./trigger-start-tables.js";

/** One schema change, applied once, in order of `version`. Never edit a released one: add the next. */
interface Migration {
  version: number;
  description: string;
  sql: string;
}

export const MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    description: "nodes, runs, events with per-agent counters, schedules, checkpoints",
    sql: `
      CREATE SEQUENCE agentd_changes;
      CREATE TABLE agentd_nodes (
        id text PRIMARY KEY,
        name text NOT NULL,
        url text,
        started_at timestamptz NOT NULL DEFAULT now(),
        lease_until timestamptz NOT NULL
      );
      CREATE TABLE agentd_runs (
        id text PRIMARY KEY,
        agent text NOT NULL,
        node text NOT NULL,
        status text NOT NULL,
        created_at text NOT NULL,
        record jsonb NOT NULL,
        change bigint NOT NULL
      );
      CREATE INDEX agentd_runs_change ON agentd_runs (change);
      CREATE INDEX agentd_runs_node_status ON agentd_runs (node, status);
      CREATE TABLE agentd_event_counters (agent text PRIMARY KEY, last_id bigint NOT NULL);
      CREATE TABLE agentd_events (
        agent text NOT NULL,
        id bigint NOT NULL,
        run text,
        line text NOT NULL,
        change bigint NOT NULL,
        position integer NOT NULL,
        PRIMARY KEY (agent, id)
      );
      CREATE INDEX agentd_events_run ON agentd_events (run, id);
      CREATE INDEX agentd_events_change ON agentd_events (change);
      CREATE TABLE agentd_schedule_state (agent text PRIMARY KEY, state jsonb NOT NULL);
      CREATE TABLE agentd_schedule_fires (
        agent text NOT NULL,
        scheduled_for text NOT NULL,
        node text NOT NULL,
        claimed_at timestamptz NOT NULL DEFAULT now(),
        PRIMARY KEY (agent, scheduled_for)
      );
      CREATE TABLE agentd_checkpoints (run text PRIMARY KEY, checkpoint jsonb NOT NULL);
    `,
  },
  {
    version: 2,
    description: "runs queued for the cluster: claimed by one node",
    sql: `
      ALTER TABLE agentd_runs ADD COLUMN claimed_by text;
      UPDATE agentd_runs SET claimed_by = node;
      CREATE INDEX agentd_runs_claimable ON agentd_runs (created_at, id)
        WHERE status = 'queued' AND claimed_by IS NULL;
      CREATE INDEX agentd_runs_agent_unfinished ON agentd_runs (agent)
        WHERE status IN ('queued', 'running', 'paused', 'waiting');
    `,
  },
  {
    version: 3,
    description: "CLI cooldowns shared by the cluster: one row per tool",
    sql: `
      CREATE TABLE agentd_cli_cooldowns (
        tool text PRIMARY KEY,
        until timestamptz NOT NULL,
        kind text NOT NULL,
        message text NOT NULL,
        node text NOT NULL,
        change bigint NOT NULL
      );
      CREATE INDEX agentd_cli_cooldowns_change ON agentd_cli_cooldowns (change);
    `,
  },
  {
    version: 4,
    description: "checkpoints kept as JSON text: jsonb refuses the \\u0000 a checkpoint's recent calls hold",
    sql: `
      ALTER TABLE agentd_checkpoints ALTER COLUMN checkpoint TYPE text USING checkpoint::text;
    `,
  },
  {
    version: 5,
    description: "actions and answers for a run's node, as rows its change feed reads",
    sql: `
      CREATE TABLE agentd_control_messages (
        id bigserial PRIMARY KEY,
        node text NOT NULL,
        message text NOT NULL,
        change bigint NOT NULL
      );
      CREATE INDEX agentd_control_messages_node_change ON agentd_control_messages (node, change);
    `,
  },
  {
    version: 6,
    description:
      "run records kept as JSON text: jsonb refuses the \\u0000 a task or a tool's output may hold",
    sql: `
      ALTER TABLE agentd_runs ADD COLUMN ended_at text, ADD COLUMN parent_run text;
      UPDATE agentd_runs SET ended_at = record->>'ended_at', parent_run = record->>'parent_run';
      ALTER TABLE agentd_runs ALTER COLUMN record TYPE text USING record::text;
    `,
  },
  {
    version: 7,
    description: "indexes for a flat start, paged run listings and pruning by age and count",
    sql: `
      CREATE INDEX agentd_runs_created ON agentd_runs (created_at, id);
      CREATE INDEX agentd_runs_agent_created ON agentd_runs (agent, created_at, id);
      CREATE INDEX agentd_runs_status_created ON agentd_runs (status, created_at, id);
      CREATE INDEX agentd_runs_parent ON agentd_runs (parent_run, created_at, id) WHERE parent_run IS NOT NULL;
      CREATE INDEX agentd_schedule_fires_claimed ON agentd_schedule_fires (claimed_at);
    `,
  },
  {
    version: 8,
    description: "idempotency keys of posted runs: one run per agent and key",
    sql: `
      ALTER TABLE agentd_runs ADD COLUMN idempotency_key text;
      CREATE UNIQUE INDEX agentd_runs_idempotency ON agentd_runs (agent, idempotency_key)
        WHERE idempotency_key IS NOT NULL;
    `,
  },
  {
    version: 9,
    description: "fire claims settled once their run or their report is written",
    sql: `
      ALTER TABLE agentd_schedule_fires ADD COLUMN settled boolean NOT NULL DEFAULT true;
      ALTER TABLE agentd_schedule_fires ALTER COLUMN settled SET DEFAULT false;
      CREATE INDEX agentd_schedule_fires_unsettled ON agentd_schedule_fires (node) WHERE NOT settled;
    `,
  },
  {
    version: 10,
    description: "each agent's last event time: a node with a clock behind never writes an earlier one",
    sql: `
      ALTER TABLE agentd_event_counters ADD COLUMN last_time text;
      UPDATE agentd_event_counters AS c SET last_time = (
        SELECT e.line::jsonb->>'time' FROM agentd_events AS e WHERE e.agent = c.agent ORDER BY e.id DESC LIMIT 1
      );
    `,
  },
  {
    version: 11,
    description: "named API tokens (hashes only) and the append-only audit trail",
    sql: ACCESS_TABLES_SQL,
  },
  {
    version: 12,
    description: "agents' memories (src/memory): one row per memory, written by compare-and-set on version",
    sql: `
      CREATE TABLE agentd_memories (
        key text PRIMARY KEY,
        content text NOT NULL,
        version text NOT NULL,
        updated_at timestamptz NOT NULL DEFAULT now()
      );
    `,
  },
  {
    version: 13,
    description: "no cluster-wide write lock: rows stamped with their transaction, followed by snapshot",
    sql: PER_AGENT_ORDER_SQL,
  },
  {
    version: 14,
    description: "deliveries held by one node each, adopted by another when it dies",
    sql: DELIVERY_TABLES_SQL,
  },
  {
    version: 15,
    description: "the audit trail pruned under retention: DELETE allowed below a prune's cutoff only",
    sql: AUDIT_RETENTION_SQL,
  },
  {
    version: 16,
    description: "webhook triggers' starts, one row each, so a trigger's rate limit holds across the cluster",
    sql: TRIGGER_START_TABLES_SQL,
  },
  {
    version: 17,
    description: "the operators' agent switches (agentd disable), shared by every node",
    sql: AGENT_SWITCHES_SQL,
  },
  {
    version: 18,
    description:
      "the run queue ordered by a database sequence, not by each node's clock; events every node reads marked",
    sql: QUEUE_ORDER_SQL + NOTABLE_EVENTS_SQL,
  },
];

/** Held (session advisory lock) while one node migrates: the others wait, then find it done. */
const MIGRATION_LOCK = 7_412_000_001;

/**
 * Brings the schema to the newest version: under an advisory lock, so nodes starting at once
 * migrate one after the other; each migration and its version row commit together.
 */
export async function migrate(pool: pg.Pool): Promise<number> {
  const client = await pool.connect();
  try {
    await client.query("SELECT pg_advisory_lock($1)", [MIGRATION_LOCK]);
    await client.query(
      "CREATE TABLE IF NOT EXISTS agentd_migrations (version integer PRIMARY KEY, description text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())",
    );
    const applied = await client.query<{ version: number }>("SELECT version FROM agentd_migrations");
    const done = new Set(applied.rows.map((row) => row.version));
    let newest = Math.max(0, ...done);
    for (const migration of MIGRATIONS) {
      if (done.has(migration.version)) continue;
      await client.query("BEGIN");
      try {
        await client.query(migration.sql);
        await client.query("INSERT INTO agentd_migrations (version, description) VALUES ($1, $2)", [
          migration.version,
          migration.description,
        ]);
        await client.query("COMMIT");
      } catch (error) {
        await client.query("ROLLBACK");
        throw error;
      }
      newest = migration.version;
    }
    return newest;
  } finally {
    await client.query("SELECT pg_advisory_unlock($1)", [MIGRATION_LOCK]).catch(() => undefined);
    client.release();
  }
}
