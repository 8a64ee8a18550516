import type { AgentScheduleState } from "./schedule-state.js";

/**
 * Where the scheduler keeps each agent's last fire and how far fires are accounted for
 * (`schedules.json` or PostgreSQL), and who takes a fire when several daemons share the schedules.
 */
export interface ScheduleStates {
  get(agentId: string): AgentScheduleState | undefined;
  /** The time after which a fire of this agent has not been accounted for. */
  accountedUntil(agentId: string): Date | undefined;
  /** Changes the agent's state in memory; `flush()` persists it. */
  set(agentId: string, state: AgentScheduleState): void;
  delete(agentId: string): void;
  flush(): void;
  /**
   * True for the one daemon that takes this fire of this agent: always true (at once, so the run
   * starts in the same tick) for one daemon on its files; with a shared store, exactly one node of
   * the cluster gets true.
   */
  claimFire(agentId: string, scheduledFor: string): boolean | Promise<boolean>;
}
