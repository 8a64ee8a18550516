import type pg from "pg";
import type { Logger } from "../../logging/logger.js";
import { type AgentScheduleState, accountedUntilOf } from "../../scheduler/schedule-state.js";
import type { ScheduleStates, UnsettledFire } from "../../scheduler/schedule-states.js";
import type { PostgresWriter } from "./postgres-writer.js";

/**
 * Schedule state shared by the cluster, and the fire claims: a row per agent and scheduled time,
 * inserted by the one node that takes the fire (the primary key refuses the others), `settled`
 * once its run's first record (same transaction) or its report is written. A claim left unsettled
 * by a node gone from the cluster is taken over by one other node, which runs or reports it.
 */
export class PostgresScheduleStates implements ScheduleStates {
  readonly #states: Map<string, AgentScheduleState>;
  readonly #dirty = new Set<string>();
  readonly #options: { writer: PostgresWriter; pool: pg.Pool; node: string; logger: Logger };
  /**
   * Fires due while the database was away, and fires this node claimed and could not start:
   * claimed at the next sweep unless another node took them.
   */
  readonly #unclaimed: UnsettledFire[] = [];

  constructor(
    options: { writer: PostgresWriter; pool: pg.Pool; node: string; logger: Logger },
    loaded: Map<string, AgentScheduleState>,
  ) {
    this.#options = options;
    this.#states = loaded;
  }

  get(agentId: string): AgentScheduleState | undefined {
    return this.#states.get(agentId);
  }

  accountedUntil(agentId: string): Date | undefined {
    return accountedUntilOf(this.#states.get(agentId));
  }

  set(agentId: string, state: AgentScheduleState): void {
    this.#states.set(agentId, state);
    this.#dirty.add(agentId);
  }

  delete(agentId: string): void {
    if (this.#states.delete(agentId)) this.#dirty.add(agentId);
  }

  flush(): void {
    for (const agent of this.#dirty) {
      this.#options.writer.enqueue({ kind: "schedule_state", agent, state: this.#states.get(agent) });
    }
    this.#dirty.clear();
  }

  /**
   * True for the node whose claim row went in; false for the others. While the database is away:
   * false, and the fire is kept to be claimed at the next sweep (`unsettledFires`).
   */
  async claimFire(agentId: string, scheduledFor: string): Promise<boolean> {
    try {
      const result = await this.#options.pool.query(
        `INSERT INTO agentd_schedule_fires (agent, scheduled_for, node, settled) VALUES ($1, $2, $3, false)
         ON CONFLICT DO NOTHING RETURNING agent`,
        [agentId, scheduledFor, this.#options.node],
      );
      return result.rowCount === 1;
    } catch (error) {
      this.#options.logger.warn(
        { err: error, agent: agentId, scheduled_for: scheduledFor },
        "cannot claim a schedule fire: PostgreSQL unreachable; it is claimed once it is back (on_missed applies)",
      );
      this.#unclaimed.push({ agent: agentId, scheduledFor });
      return false;
    }
  }

  settleFires(agentId: string, scheduledFor: string[]): void {
    if (scheduledFor.length === 0) return;
    this.#options.writer.enqueue({ kind: "fires_settled", agent: agentId, scheduledFor });
  }

  /** Claimed at the next sweep, like the fires due while the database was away. */
  firesMissed(agentId: string, scheduledFor: string[]): void {
    for (const fire of scheduledFor) this.#unclaimed.push({ agent: agentId, scheduledFor: fire });
  }

  /**
   * Claimed again at the next sweep, and run only if the claim is still this node's: while this
   * node was taken for dead (frozen, cut off), another may have taken it over and run it.
   */
  fireNotStarted(agentId: string, scheduledFor: string[]): void {
    for (const fire of scheduledFor) this.#unclaimed.push({ agent: agentId, scheduledFor: fire });
  }

  async unsettledFires(agents: readonly string[]): Promise<UnsettledFire[]> {
    const owned: UnsettledFire[] = [];
    const { pool, node } = this.#options;
    try {
      if (this.#unclaimed.length > 0) {
        const count = this.#unclaimed.length;
        const due = [
          ...new Map(this.#unclaimed.map((fire) => [`${fire.agent} ${fire.scheduledFor}`, fire])).values(),
        ];
        // A claim of this node's own that is still unsettled is its own too: a claim whose
        // answer was lost with the connection (the insert committed, the node saw an error).
        const claimed = await pool.query<{ agent: string; scheduled_for: string }>(
          `INSERT INTO agentd_schedule_fires AS f (agent, scheduled_for, node, settled)
           SELECT agent, scheduled_for, $3, false FROM unnest($1::text[], $2::text[]) AS d(agent, scheduled_for)
           ORDER BY agent, scheduled_for
           ON CONFLICT (agent, scheduled_for) DO UPDATE SET claimed_at = now()
             WHERE f.node = EXCLUDED.node AND NOT f.settled
           RETURNING agent, scheduled_for`,
          [due.map((fire) => fire.agent), due.map((fire) => fire.scheduledFor), node],
        );
        this.#unclaimed.splice(0, count);
        owned.push(...claimed.rows.map((row) => ({ agent: row.agent, scheduledFor: row.scheduled_for })));
      }
      // One statement: two nodes sweeping at once take each claim once (the second finds it owned).
      const orphans = await pool.query<{ agent: string; scheduled_for: string }>(
        `UPDATE agentd_schedule_fires AS f SET node = $1, claimed_at = now()
         WHERE NOT f.settled AND f.agent = ANY($2::text[])
           AND NOT EXISTS (SELECT 1 FROM agentd_nodes AS n WHERE n.id = f.node)
         RETURNING agent, scheduled_for`,
        [node, agents],
      );
      owned.push(...orphans.rows.map((row) => ({ agent: row.agent, scheduledFor: row.scheduled_for })));
    } catch (error) {
      this.#options.logger.debug({ err: error }, "cannot sweep schedule fires now: PostgreSQL unreachable");
    }
    return owned.sort(
      (left, right) =>
        left.agent.localeCompare(right.agent) || left.scheduledFor.localeCompare(right.scheduledFor),
    );
  }
}
