import type pg from "pg";
import type { Checkpoint } from "../../checkpoints/checkpoint.js";
import type { RunRecord } from "../../run-vocabulary/run-record.js";
import { isTerminal } from "../../run-vocabulary/run-status.js";
import { parseRunRecord } from "./run-record-text.js";
import type { AgentScheduleState } from "../../scheduler/schedule-state.js";
import type { CliCooldown } from "../../workers/cli/cli-cooldown-records.js";
import type { TimedDraft, WriteOperation } from "./write-operation.js";

/**
 * The next change number. No lock is taken: a writer takes it after the row locks of what it
 * changes (its runs, its agents' event counters), so the numbers of one run's writes, and of one
 * agent's events, follow commit order; writers of other runs and agents never wait on each other.
 * The change feed does not rely on numbers across rows: it follows transactions by snapshot.
 */
export async function takeChangeNumber(client: pg.PoolClient): Promise<string> {
  const changeRow = await client.query<{ change: string }>("SELECT nextval('agentd_changes') AS change");
  return changeRow.rows[0]?.change ?? "0";
}

/** A run this node wrote but no longer holds: the record the database keeps, by its owner. */
export interface RefusedRunWrite {
  record: RunRecord;
  /** The node that wrote the kept record. */
  node: string;
  change: string;
}

/** A committed batch: its change number, and the run writes refused because another node holds the run. */
export interface WrittenBatch {
  change: string;
  refused: RefusedRunWrite[];
  /**
   * New runs of schedule fires whose claim another node holds now (it took them over while this
   * node was taken for dead) or that were settled meanwhile: not written, nor their events.
   */
  stale: string[];
}

/**
 * Writes a batch in one transaction with one change number. Event ids come from the per-agent
 * counter row, locked first and bumped in the same transaction as the inserts: two nodes writing
 * events of one agent wait on that row (and only they: there is no cluster-wide lock), ids follow
 * commit order within the agent, and a rolled-back write gives its ids back, so ids never skip nor
 * repeat. Locks are taken in one order by every writer: the batch's run rows by id, then its
 * agents' counter rows by agent, then the change number.
 */
export async function writeBatch(
  client: pg.PoolClient,
  node: string,
  batch: WriteOperation[],
): Promise<WrittenBatch> {
  await client.query("BEGIN");
  try {
    await lockRuns(client, batch);
    const lastTimes = await lockCounters(client, batch);
    const change = await takeChangeNumber(client);
    const runs = new Map<string, { record: RunRecord; claimable: boolean }>();
    const drafts: TimedDraft[] = [];
    const states = new Map<string, AgentScheduleState | undefined>();
    const checkpoints = new Map<string, Checkpoint | undefined>();
    const cooldowns = new Map<string, CliCooldown>();
    const controls: Array<{ node: string; message: string }> = [];
    const settledFires: Array<{ agent: string; scheduledFor: string[] }> = [];
    for (const operation of batch) {
      if (operation.kind === "run")
        runs.set(operation.record.id, { record: operation.record, claimable: operation.claimable === true });
      else if (operation.kind === "event") drafts.push(operation.draft);
      else if (operation.kind === "schedule_state") states.set(operation.agent, operation.state);
      else if (operation.kind === "checkpoint") checkpoints.set(operation.run, operation.checkpoint);
      else if (operation.kind === "control") controls.push(operation);
      else if (operation.kind === "fires_settled") settledFires.push(operation);
      else cooldowns.set(operation.cooldown.tool, operation.cooldown);
    }
    // A fire runs once: a new run of a fire whose claim is no longer this node's is not written.
    const stale = await staleFireRuns(client, node, [...runs.values()]);
    for (const id of stale) runs.delete(id);
    const refused = await writeRuns(client, node, change, [...runs.values()]);
    await settleFires(client, node, [...runs.values()], settledFires);
    // Nor the events this node made of a run it no longer holds (the fence on events).
    const lost = await runsNotHeld(client, node, drafts);
    for (const { record } of refused) lost.add(record.id);
    for (const id of stale) lost.add(id);
    const refusedRuns = new Set([...refused.map(({ record }) => record.id), ...stale]);
    const eventAgents = await writeEvents(
      client,
      change,
      lastTimes,
      lost.size === 0
        ? drafts
        : drafts.filter(
            (draft) =>
              typeof draft.run !== "string" ||
              // Who acted on a run is recorded by the node asked, which need not hold the run.
              draft.type === "audit" ||
              !(draft.type === "status" ? refusedRuns.has(draft.run) : lost.has(draft.run)),
          ),
    );
    await writeStates(client, states);
    await writeCheckpoints(client, node, checkpoints);
    await writeCooldowns(client, node, change, [...cooldowns.values()]);
    if (controls.length > 0)
      await client.query(
        `INSERT INTO agentd_control_messages (node, message, change)
         SELECT node, message, $1 FROM unnest($2::text[], $3::text[]) WITH ORDINALITY AS m(node, message, position)
         ORDER BY position`,
        [change, controls.map((control) => control.node), controls.map((control) => control.message)],
      );
    if (drafts.length < batch.length) await client.query("SELECT pg_notify('agentd_changes', $1)", [change]);
    // Per agent: a node follows only the agents it needs (see ChangeFeed).
    if (eventAgents.length > 0)
      await client.query("SELECT pg_notify('agentd_events', agent) FROM unnest($1::text[]) AS agent", [
        eventAgents,
      ]);
    // A run queued for the cluster, or a slot freed: nodes with room try to claim.
    const queueMoved = [...runs.values()].some(
      ({ record, claimable }) => claimable || isTerminal(record.status),
    );
    if (queueMoved) await client.query("SELECT pg_notify('agentd_queue', '')");
    await client.query("COMMIT");
    return { change, refused, stale };
  } catch (error) {
    await client.query("ROLLBACK").catch(() => undefined);
    throw error;
  }
}

/**
 * A run written by this node is this node's (`claimed_by`), except a new run queued for the
 * cluster, which waits unclaimed until a node with a free slot claims it. A run changes only while
 * this node holds it (the fence): once a node that took this one for dead has taken its runs over
 * (or put them back in the queue), this node's late writes of them are refused, and what the
 * database keeps instead is returned.
 */
async function writeRuns(
  client: pg.PoolClient,
  node: string,
  change: string,
  writes: Array<{ record: RunRecord; claimable: boolean }>,
): Promise<RefusedRunWrite[]> {
  if (writes.length === 0) return [];
  const written = await client.query<{ id: string }>(
    `INSERT INTO agentd_runs (id, agent, node, status, created_at, ended_at, parent_run, record, change, claimed_by)
     SELECT id, agent, $1, status, created_at, ended_at, parent_run, record, $2,
       CASE WHEN claimable THEN NULL ELSE $1 END
     FROM unnest($3::text[], $4::text[], $5::text[], $6::text[], $7::text[], $8::text[], $9::text[], $10::boolean[])
       AS r(id, agent, status, created_at, ended_at, parent_run, record, claimable)
     ON CONFLICT (id) DO UPDATE SET node = EXCLUDED.node, status = EXCLUDED.status,
       ended_at = EXCLUDED.ended_at, record = EXCLUDED.record, change = EXCLUDED.change,
       claimed_by = EXCLUDED.claimed_by
     WHERE agentd_runs.claimed_by IS NOT DISTINCT FROM EXCLUDED.claimed_by
     RETURNING id`,
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
  if (written.rows.length === writes.length) return [];
  const accepted = new Set(written.rows.map((row) => row.id));
  const refusedIds = writes.map(({ record }) => record.id).filter((id) => !accepted.has(id));
  const kept = await client.query<{ node: string; record: unknown; change: string }>(
    "SELECT node, record, change::text AS change FROM agentd_runs WHERE id = ANY($1::text[])",
    [refusedIds],
  );
  return kept.rows.flatMap((row) => {
    const record = parseRunRecord(row.record);
    return record === undefined ? [] : [{ record, node: row.node, change: row.change }];
  });
}

/**
 * The runs of these events that this node does not hold: neither claimed by it nor last written
 * or put back in the queue by it (a takeover and a sweep write the run as the taker's; a node
 * that put a run in the queue still reports it until the claimer's first write). Their rows
 * are locked for share until commit, so a sweep taking them waits for this batch or this batch
 * sees its result. A run with no row yet is not refused.
 */
async function runsNotHeld(client: pg.PoolClient, node: string, drafts: TimedDraft[]): Promise<Set<string>> {
  // Status events go with their run's record, refused with it (writeRuns); a node starting a
  // run again from its checkpoint reports it queued before it holds it.
  const runs = [
    ...new Set(
      drafts.flatMap((draft) =>
        typeof draft.run === "string" && draft.type !== "status" && draft.type !== "audit" ? [draft.run] : [],
      ),
    ),
  ];
  if (runs.length === 0) return new Set();
  const result = await client.query<{ id: string }>(
    `SELECT id FROM agentd_runs WHERE id = ANY($1::text[])
       AND claimed_by IS DISTINCT FROM $2 AND node IS DISTINCT FROM $2
     ORDER BY id FOR SHARE`,
    [runs, node],
  );
  return new Set(result.rows.map((row) => row.id));
}

/**
 * The new runs of schedule fires (a fire's run, a catch-up run) whose claim this node no longer
 * holds: another node took it over (this node was taken for dead while the run waited to be
 * written, frozen or cut off) or it was settled meanwhile. The other node runs or reports the
 * fire; writing this run too would run it twice. The claims are locked until commit, so a sweep
 * taking one waits for this batch (and then finds it settled) or this batch sees it taken.
 */
async function staleFireRuns(
  client: pg.PoolClient,
  node: string,
  writes: Array<{ record: RunRecord; claimable: boolean }>,
): Promise<string[]> {
  const fresh = writes.flatMap(({ record, claimable }) =>
    claimable && record.status === "queued" && "scheduled_for" in record.trigger
      ? [{ id: record.id, agent: record.agent, scheduledFor: record.trigger.scheduled_for }]
      : [],
  );
  if (fresh.length === 0) return [];
  const claims = await client.query<{ id: string; node: string; settled: boolean }>(
    `SELECT d.id, f.node, f.settled
     FROM unnest($1::text[], $2::text[], $3::text[]) AS d(id, agent, scheduled_for)
     JOIN agentd_schedule_fires AS f ON f.agent = d.agent AND f.scheduled_for = d.scheduled_for
     WHERE NOT EXISTS (SELECT 1 FROM agentd_runs AS r WHERE r.id = d.id)
     ORDER BY f.agent, f.scheduled_for
     FOR UPDATE OF f`,
    [fresh.map((run) => run.id), fresh.map((run) => run.agent), fresh.map((run) => run.scheduledFor)],
  );
  return claims.rows.filter((claim) => claim.node !== node || claim.settled).map((claim) => claim.id);
}

/**
 * Marks fire claims settled: a scheduled run's with the run's first record (same transaction, so a
 * claim without its run stays unsettled for the sweep to find), a catch-up run's (`missed`) with
 * every unsettled claim of this node for the agent up to its time, and the claims a report
 * settles (`fires_settled`, after the report's event in the same order).
 */
async function settleFires(
  client: pg.PoolClient,
  node: string,
  runs: Array<{ record: RunRecord }>,
  reports: Array<{ agent: string; scheduledFor: string[] }>,
): Promise<void> {
  const fires = { agent: [] as string[], scheduledFor: [] as string[], upTo: [] as boolean[] };
  for (const { record } of runs) {
    const { trigger } = record;
    if (record.status !== "queued" || (trigger.kind !== "schedule" && trigger.kind !== "missed")) continue;
    fires.agent.push(record.agent);
    fires.scheduledFor.push(trigger.scheduled_for);
    fires.upTo.push(trigger.kind === "missed");
  }
  for (const report of reports)
    for (const scheduledFor of report.scheduledFor) {
      fires.agent.push(report.agent);
      fires.scheduledFor.push(scheduledFor);
      fires.upTo.push(false);
    }
  if (fires.agent.length === 0) return;
  await client.query(
    `UPDATE agentd_schedule_fires AS f SET settled = true
     FROM unnest($1::text[], $2::text[], $3::boolean[]) AS s(agent, scheduled_for, up_to)
     WHERE NOT f.settled AND f.agent = s.agent
       AND (f.scheduled_for = s.scheduled_for OR (s.up_to AND f.scheduled_for <= s.scheduled_for AND f.node = $4))`,
    [fires.agent, fires.scheduledFor, fires.upTo, node],
  );
}

/**
 * Locks the rows of the runs this batch writes or reports events of, by id: a run's writes
 * commit in the order of their change numbers, and a sweep taking one of them waits for this batch.
 */
async function lockRuns(client: pg.PoolClient, batch: WriteOperation[]): Promise<void> {
  const ids = new Set<string>();
  for (const operation of batch) {
    if (operation.kind === "run") ids.add(operation.record.id);
    else if (operation.kind === "event" && typeof operation.draft.run === "string")
      ids.add(operation.draft.run);
  }
  if (ids.size === 0) return;
  await client.query("SELECT id FROM agentd_runs WHERE id = ANY($1::text[]) ORDER BY id FOR UPDATE", [
    [...ids],
  ]);
}

/**
 * Locks the event counters of the agents this batch writes events of, by agent (creating the
 * missing ones first, so the lock is always a row lock taken before the change number); returns
 * each agent's last event time.
 */
async function lockCounters(client: pg.PoolClient, batch: WriteOperation[]): Promise<Map<string, string>> {
  const agents = [
    ...new Set(batch.flatMap((operation) => (operation.kind === "event" ? [operation.draft.agent] : []))),
  ].sort();
  if (agents.length === 0) return new Map();
  const select = () =>
    client.query<{ agent: string; last_time: string | null }>(
      "SELECT agent, last_time FROM agentd_event_counters WHERE agent = ANY($1::text[]) ORDER BY agent FOR UPDATE",
      [agents],
    );
  let locked = await select();
  if (locked.rows.length < agents.length) {
    await client.query(
      `INSERT INTO agentd_event_counters (agent, last_id)
       SELECT agent, 0 FROM unnest($1::text[]) AS agent ORDER BY agent ON CONFLICT (agent) DO NOTHING`,
      [agents],
    );
    locked = await select();
  }
  return new Map(locked.rows.map((row) => [row.agent, row.last_time ?? ""]));
}

/** Inserts the events with their agents' next ids; returns the agents written to. */
async function writeEvents(
  client: pg.PoolClient,
  change: string,
  lastTime: Map<string, string>,
  drafts: TimedDraft[],
): Promise<string[]> {
  if (drafts.length === 0) return [];
  const counts = new Map<string, number>();
  for (const draft of drafts) counts.set(draft.agent, (counts.get(draft.agent) ?? 0) + 1);
  const agents = [...counts.keys()].sort();
  // An agent's event times never go backwards, whichever node's clock wrote the one before.
  const times = drafts.map((draft) => {
    const time =
      draft.time > (lastTime.get(draft.agent) ?? "") ? draft.time : (lastTime.get(draft.agent) as string);
    lastTime.set(draft.agent, time);
    return time;
  });
  const bumped = await client.query<{ agent: string; last_id: string }>(
    `UPDATE agentd_event_counters AS c SET last_id = c.last_id + u.count, last_time = u.last_time
     FROM unnest($1::text[], $2::bigint[], $3::text[]) AS u(agent, count, last_time)
     WHERE c.agent = u.agent
     RETURNING c.agent, c.last_id`,
    [
      agents,
      agents.map((agent) => counts.get(agent) ?? 0),
      agents.map((agent) => lastTime.get(agent) ?? null),
    ],
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
    notable: [] as boolean[],
  };
  for (const [index, draft] of drafts.entries()) {
    const id = nextId.get(draft.agent) ?? 1;
    nextId.set(draft.agent, id + 1);
    const event = {
      id,
      agent: draft.agent,
      run: draft.run,
      type: draft.type,
      time: times[index] ?? draft.time,
      data: draft.data,
    };
    columns.agent.push(draft.agent);
    columns.id.push(id);
    columns.run.push(draft.run);
    columns.line.push(JSON.stringify(event));
    columns.notable.push(isNotable(draft));
  }
  await client.query(
    `INSERT INTO agentd_events (agent, id, run, line, change, position, notable)
     SELECT agent, id, run, line, $1, position, notable
     FROM unnest($2::text[], $3::bigint[], $4::text[], $5::text[], $6::boolean[])
       WITH ORDINALITY AS e(agent, id, run, line, notable, position)`,
    [change, columns.agent, columns.id, columns.run, columns.line, columns.notable],
  );
  return agents;
}

/**
 * Whether every node reads the event, following its agent or not: approvals, questions and the
 * status that ends a run (see NOTABLE_EVENTS_SQL).
 */
export function isNotable(draft: TimedDraft): boolean {
  if (draft.type === "approval" || draft.type === "question") return true;
  return draft.type === "status" && isTerminal(draft.data.status);
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

/**
 * A run's checkpoint is not written nor removed by a node that does not hold the run (the runs'
 * fence): not once another node took it over or it went back to the queue.
 */
async function writeCheckpoints(
  client: pg.PoolClient,
  node: string,
  checkpoints: Map<string, Checkpoint | undefined>,
): Promise<void> {
  const held = "NOT EXISTS (SELECT 1 FROM agentd_runs WHERE id = $1 AND claimed_by IS DISTINCT FROM $2)";
  for (const [run, checkpoint] of checkpoints) {
    if (checkpoint === undefined)
      await client.query(`DELETE FROM agentd_checkpoints WHERE run = $1 AND ${held}`, [run, node]);
    else
      await client.query(
        `INSERT INTO agentd_checkpoints (run, checkpoint) SELECT $1::text, $3::text WHERE ${held}
         ON CONFLICT (run) DO UPDATE SET checkpoint = EXCLUDED.checkpoint`,
        [run, node, JSON.stringify(checkpoint)],
      );
  }
}
