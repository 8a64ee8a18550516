import type pg from "pg";
import type { Checkpoint } from "../../checkpoints/checkpoint.js";
import type { RunRecord } from "../../runs/run-record.js";
import { isTerminal } from "../../runs/run-status.js";
import type { AgentScheduleState } from "../../scheduler/schedule-state.js";
import type { CliCooldown } from "../../workers/cli/cli-cooldown-records.js";
import type { TimedDraft, WriteOperation } from "./write-operation.js";

/**
 * Taken by every writing transaction: they commit one after the other, so a reader that has seen
 * change N has seen every change below it (the change feed's watermark relies on it).
 */
const CHANGES_LOCK = 7_412_000_002;

/**
 * The next change number, in a transaction just begun: under the changes lock, held until it
 * commits, so the change feed never sees a lower number appear after a higher one.
 */
export async function takeChangeNumber(client: pg.PoolClient): Promise<string> {
  await client.query("SELECT pg_advisory_xact_lock($1)", [CHANGES_LOCK]);
  const changeRow = await client.query<{ change: string }>("SELECT nextval('agentd_changes') AS change");
  return changeRow.rows[0]?.change ?? "0";
}

/**
 * Writes a batch in one transaction with one change number, which it returns. Event ids come from the per-agent
 * counter row, bumped in the same transaction as the inserts: two nodes writing events of one
 * agent wait on that row, and a rolled-back write gives its ids back, so ids never skip nor repeat.
 */
export async function writeBatch(
  client: pg.PoolClient,
  node: string,
  batch: WriteOperation[],
): Promise<string> {
  await client.query("BEGIN");
  try {
    const change = await takeChangeNumber(client);
    const runs = new Map<string, { record: RunRecord; claimable: boolean }>();
    const drafts: TimedDraft[] = [];
    const states = new Map<string, AgentScheduleState | undefined>();
    const checkpoints = new Map<string, Checkpoint | undefined>();
    const cooldowns = new Map<string, CliCooldown>();
    const controls: Array<{ node: string; message: string }> = [];
    for (const operation of batch) {
      if (operation.kind === "run")
        runs.set(operation.record.id, { record: operation.record, claimable: operation.claimable === true });
      else if (operation.kind === "event") drafts.push(operation.draft);
      else if (operation.kind === "schedule_state") states.set(operation.agent, operation.state);
      else if (operation.kind === "checkpoint") checkpoints.set(operation.run, operation.checkpoint);
      else if (operation.kind === "control") controls.push(operation);
      else cooldowns.set(operation.cooldown.tool, operation.cooldown);
    }
    await writeRuns(client, node, change, [...runs.values()]);
    await writeEvents(client, change, drafts);
    await writeStates(client, states);
    await writeCheckpoints(client, checkpoints);
    await writeCooldowns(client, node, change, [...cooldowns.values()]);
    if (controls.length > 0)
      await client.query(
        `INSERT INTO agentd_control_messages (node, message, change)
         SELECT node, message, $1 FROM unnest($2::text[], $3::text[]) WITH ORDINALITY AS m(node, message, position)
         ORDER BY position`,
        [change, controls.map((control) => control.node), controls.map((control) => control.message)],
      );
    await client.query("SELECT pg_notify('agentd_changes', $1)", [change]);
    // A run queued for the cluster, or a slot freed: nodes with room try to claim.
    const queueMoved = [...runs.values()].some(
      ({ record, claimable }) => claimable || isTerminal(record.status),
    );
    if (queueMoved) await client.query("SELECT pg_notify('agentd_queue', '')");
    await client.query("COMMIT");
    return change;
  } catch (error) {
    await client.query("ROLLBACK").catch(() => undefined);
    throw error;
  }
}

/**
 * A run written by this node is this node's (`claimed_by`), except a new run queued for the
 * cluster, which waits unclaimed until a node with a free slot claims it.
 */
async function writeRuns(
  client: pg.PoolClient,
  node: string,
  change: string,
  writes: Array<{ record: RunRecord; claimable: boolean }>,
): Promise<void> {
  if (writes.length === 0) return;
  await client.query(
    `INSERT INTO agentd_runs (id, agent, node, status, created_at, ended_at, parent_run, record, change, claimed_by)
     SELECT id, agent, $1, status, created_at, ended_at, parent_run, record, $2,
       CASE WHEN claimable THEN NULL ELSE $1 END
     FROM unnest($3::text[], $4::text[], $5::text[], $6::text[], $7::text[], $8::text[], $9::text[], $10::boolean[])
       AS r(id, agent, status, created_at, ended_at, parent_run, record, claimable)
     ON CONFLICT (id) DO UPDATE SET node = EXCLUDED.node, status = EXCLUDED.status,
       ended_at = EXCLUDED.ended_at, record = EXCLUDED.record, change = EXCLUDED.change,
       claimed_by = EXCLUDED.claimed_by`,
    [
      node,
      change,
      writes.map(({ record }) => record.id),
      writes.map(({ record }) => record.agent),
      writes.map(({ record }) => record.status),
      writes.map(({ record }) => record.created_at),
      writes.map(({ record }) => record.ended_at ?? null),
      writes.map(({ record }) => record.parent_run ?? null),
      writes.map(({ record }) => JSON.stringify(record)),
      writes.map(({ claimable }) => claimable),
    ],
  );
}

async function writeEvents(client: pg.PoolClient, change: string, drafts: TimedDraft[]): Promise<void> {
  if (drafts.length === 0) return;
  const counts = new Map<string, number>();
  for (const draft of drafts) counts.set(draft.agent, (counts.get(draft.agent) ?? 0) + 1);
  const agents = [...counts.keys()].sort();
  // Sorted agents: two nodes bumping the same counters lock them in the same order (no deadlock).
  const bumped = await client.query<{ agent: string; last_id: string }>(
    `INSERT INTO agentd_event_counters (agent, last_id)
     SELECT agent, count FROM unnest($1::text[], $2::bigint[]) AS c(agent, count) ORDER BY agent
     ON CONFLICT (agent) DO UPDATE SET last_id = agentd_event_counters.last_id + EXCLUDED.last_id
     RETURNING agent, last_id`,
    [agents, agents.map((agent) => counts.get(agent) ?? 0)],
  );
  const nextId = new Map<string, number>();
  for (const row of bumped.rows) {
    nextId.set(row.agent, Number(row.last_id) - (counts.get(row.agent) ?? 0) + 1);
  }
  const columns = {
    agent: [] as string[],
    id: [] as number[],
    run: [] as Array<string | null>,
    line: [] as string[],
  };
  for (const draft of drafts) {
    const id = nextId.get(draft.agent) ?? 1;
    nextId.set(draft.agent, id + 1);
    const event = {
      id,
      agent: draft.agent,
      run: draft.run,
      type: draft.type,
      time: draft.time,
      data: draft.data,
    };
    columns.agent.push(draft.agent);
    columns.id.push(id);
    columns.run.push(draft.run);
    columns.line.push(JSON.stringify(event));
  }
  await client.query(
    `INSERT INTO agentd_events (agent, id, run, line, change, position)
     SELECT agent, id, run, line, $1, position
     FROM unnest($2::text[], $3::bigint[], $4::text[], $5::text[]) WITH ORDINALITY AS e(agent, id, run, line, position)`,
    [change, columns.agent, columns.id, columns.run, columns.line],
  );
}

async function writeStates(
  client: pg.PoolClient,
  states: Map<string, AgentScheduleState | undefined>,
): Promise<void> {
  for (const [agent, state] of states) {
    if (state === undefined)
      await client.query("DELETE FROM agentd_schedule_state WHERE agent = $1", [agent]);
    else
      await client.query(
        `INSERT INTO agentd_schedule_state (agent, state) VALUES ($1, $2::jsonb)
         ON CONFLICT (agent) DO UPDATE SET state = EXCLUDED.state`,
        [agent, JSON.stringify(state)],
      );
  }
}

/** One row per tool: the newest cooldown replaces the last, with the change number the feed follows. */
async function writeCooldowns(
  client: pg.PoolClient,
  node: string,
  change: string,
  cooldowns: CliCooldown[],
): Promise<void> {
  for (const cooldown of cooldowns) {
    await client.query(
      `INSERT INTO agentd_cli_cooldowns (tool, until, kind, message, node, change) VALUES ($1, $2, $3, $4, $5, $6)
       ON CONFLICT (tool) DO UPDATE SET until = EXCLUDED.until, kind = EXCLUDED.kind,
         message = EXCLUDED.message, node = EXCLUDED.node, change = EXCLUDED.change`,
      [cooldown.tool, cooldown.until.toISOString(), cooldown.kind, cooldown.message, node, change],
    );
  }
}

async function writeCheckpoints(
  client: pg.PoolClient,
  checkpoints: Map<string, Checkpoint | undefined>,
): Promise<void> {
  for (const [run, checkpoint] of checkpoints) {
    if (checkpoint === undefined) await client.query("DELETE FROM agentd_checkpoints WHERE run = $1", [run]);
    else
      await client.query(
        `INSERT INTO agentd_checkpoints (run, checkpoint) VALUES ($1, $2)
         ON CONFLICT (run) DO UPDATE SET checkpoint = EXCLUDED.checkpoint`,
        [run, JSON.stringify(checkpoint)],
      );
  }
}
