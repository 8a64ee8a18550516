import type pg from "pg";
import type { Logger } from "../../logging/logger.js";
import { type AgentScheduleState, accountedUntilOf } from "../../scheduler/schedule-state.js";
import type { ScheduleStates } from "../../scheduler/schedule-states.js";
import type { PostgresWriter } from "./postgres-writer.js";

/**
 * Schedule state shared by the cluster, and the fire claims: a row per agent and scheduled time,
 * inserted by the one node that takes the fire (the primary key refuses the others).
 */
export class PostgresScheduleStates implements ScheduleStates {
  readonly #states: Map<string, AgentScheduleState>;
  readonly #dirty = new Set<string>();
  readonly #options: { writer: PostgresWriter; pool: pg.Pool; node: string; logger: Logger };

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

  /** True for the node whose claim row went in; false for the others, and while the database is away. */
  async claimFire(agentId: string, scheduledFor: string): Promise<boolean> {
    try {
      const result = await this.#options.pool.query(
        `INSERT INTO agentd_schedule_fires (agent, scheduled_for, node) VALUES ($1, $2, $3)
         ON CONFLICT DO NOTHING RETURNING agent`,
        [agentId, scheduledFor, this.#options.node],
      );
      return result.rowCount === 1;
    } catch (error) {
      this.#options.logger.warn(
        { err: error, agent: agentId, scheduled_for: scheduledFor },
        "cannot claim a schedule fire: PostgreSQL unreachable; the fire is left to the other nodes",
      );
      return false;
    }
  }
}
