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
  /**
   * Fires of this daemon accounted for by a report (`skipped`, `missed`) published just before, in
   * the same synchronous step: their claims are settled in the transaction that writes that event,
   * so a crash leaves both or neither. (A run settles its fire's claim with its record.)
   */
  settleFires(agentId: string, scheduledFor: string[]): void;
  /**
   * Fires this daemon took but could not start (the store was away): handed back by the next
   * `unsettledFires`, to be run or reported under `on_missed`.
   */
  fireNotStarted(agentId: string, scheduledFor: string[]): void;
  /**
   * Fires this daemon woke too late for (a loaded or suspended machine): claimed by the next
   * `unsettledFires` unless another node took them, then run or reported under `on_missed`.
   */
  firesMissed(agentId: string, scheduledFor: string[]): void;
  /**
   * The fires this daemon now owns and must run or report under `on_missed`: those it could not
   * start, those due while the store was away or while it woke late (claimed now, unless another
   * node took them), and
   * those claimed by a node gone from the cluster that neither ran nor reported them, of the
   * agents this daemon schedules (`agents`: each claim is taken over by one node only). Oldest first.
   */
  unsettledFires(agents: readonly string[]): Promise<UnsettledFire[]>;
}

/** A fire to run or report under `on_missed`. */
export interface UnsettledFire {
  agent: string;
  scheduledFor: string;
}
