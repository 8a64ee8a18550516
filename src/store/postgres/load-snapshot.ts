import type pg from "pg";
import type { Checkpoint } from "../../checkpoints/checkpoint.js";
import type { LoadedAgentLog } from "../../events/load-agent-logs.js";
import { parseRunRecord } from "./run-record-text.js";
import type { RunRecord } from "../../run-vocabulary/run-record.js";
import type { AgentScheduleState } from "../../scheduler/schedule-state.js";
import type { CliCooldown } from "../../workers/cli/cli-cooldown-records.js";
import { parseCheckpoint } from "./postgres-checkpoints.js";
import { CooldownRowSchema } from "./postgres-cli-cooldowns.js";
import { HELD_RUNS_SQL, UNFINISHED_STATUSES_SQL } from "./run-history-queries.js";

/** What a node loads at start, all from one snapshot, and the change it is current up to. */
export interface Snapshot {
  /** The runs held in memory from the start (see HELD_RUNS_SQL), oldest first. */
  runs: RunRecord[];
  /** Which node wrote each run last. */
  runNodes: Map<string, string>;
  logs: LoadedAgentLog[];
  states: Map<string, AgentScheduleState>;
  /** The last CLI cooldown of each tool (one row per tool); `active` expires them by the node's clock. */
  cooldowns: CliCooldown[];
  /** The checkpoints of runs no node is running (cut off by a crash or a shutdown): resumable. */
  checkpoints: Checkpoint[];
  /** The snapshot all this was read in (`pg_current_snapshot()` as text): the change feed goes on from it. */
  snapshot: string;
}

/** The newest runs of all held from the start besides the ones a node needs (see HELD_RUNS_SQL). */
export const RECENT_RUNS_HELD = 1_000;

/**
 * Reads what a node starts with in one repeatable-read snapshot. Flat as history grows: the runs
 * held are the unfinished ones, each agent's newest, the resumable ones and the `recentRuns`
 * newest; the event tails are read per agent through the primary key. Older runs stay in the
 * database, listed by `PostgresRunRecords.page`.
 */
export async function loadSnapshot(
  pool: Pick<pg.Pool, "connect">,
  bufferSize: number,
  recentRuns = RECENT_RUNS_HELD,
): Promise<Snapshot> {
  const client = await pool.connect();
  try {
    await client.query("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY");
    const snapshot = await client.query<{ snapshot: string }>(
      "SELECT pg_current_snapshot()::text AS snapshot",
    );
    const runs = await client.query<{ record: unknown; node: string }>(HELD_RUNS_SQL, [recentRuns]);
    // Each agent's tail through its primary key: never a pass over every event ever written.
    const events = await client.query<{ agent: string; id: string; line: string }>(
      `SELECT tail.agent, tail.id, tail.line FROM agentd_event_counters AS counters
       CROSS JOIN LATERAL (
         SELECT agent, id, line, change, position FROM agentd_events AS e
         WHERE e.agent = counters.agent ORDER BY e.id DESC LIMIT $1
       ) AS tail
       ORDER BY tail.change, tail.position`,
      [bufferSize],
    );
    const counters = await client.query<{ agent: string; last_id: string }>(
      "SELECT agent, last_id FROM agentd_event_counters",
    );
    const states = await client.query<{ agent: string; state: AgentScheduleState }>(
      "SELECT agent, state FROM agentd_schedule_state",
    );
    const cooldowns = await client.query<Record<string, unknown>>(
      "SELECT tool, until, kind, message FROM agentd_cli_cooldowns",
    );
    const checkpoints = await client.query<{ checkpoint: string }>(
      `SELECT c.checkpoint FROM agentd_checkpoints AS c LEFT JOIN agentd_runs AS r ON r.id = c.run
       WHERE r.id IS NULL OR r.status NOT IN ${UNFINISHED_STATUSES_SQL}`,
    );
    await client.query("COMMIT");
    const records: RunRecord[] = [];
    const runNodes = new Map<string, string>();
    for (const row of runs.rows) {
      const record = parseRunRecord(row.record);
      if (record === undefined) continue;
      records.push(record);
      runNodes.set(record.id, row.node);
    }
    const logs = new Map<string, LoadedAgentLog>();
    for (const row of counters.rows)
      logs.set(row.agent, { agent: row.agent, events: [], lastId: Number(row.last_id) });
    let sequence = 0;
    for (const row of events.rows) {
      const log = logs.get(row.agent);
      if (!log) continue;
      const time = Date.parse((JSON.parse(row.line) as { time?: string }).time ?? "") || 0;
      sequence += 1;
      log.events.push({ id: Number(row.id), time, line: row.line, sequence });
    }
    return {
      runs: records,
      runNodes,
      logs: [...logs.values()],
      states: new Map(states.rows.map((row) => [row.agent, row.state])),
      cooldowns: cooldowns.rows.flatMap((row) => {
        const parsed = CooldownRowSchema.safeParse(row);
        return parsed.success ? [parsed.data] : [];
      }),
      checkpoints: checkpoints.rows.flatMap((row) => parseCheckpoint(row.checkpoint) ?? []),
      snapshot: snapshot.rows[0]?.snapshot ?? "1:1:",
    };
  } finally {
    client.release();
  }
}
