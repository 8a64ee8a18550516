import { Cron } from "croner";
import type { AgentDefinition } from "../definitions/agent-definition.js";
import type { Schedule } from "../definitions/agent-schema.js";
import { AgentdError } from "../errors/agentd-error.js";
import type { EventPublisher } from "../events/event-bus.js";
import type { Logger } from "../logging/logger.js";
import type { RunRecord, RunTrigger } from "../runs/run-record.js";
import { missedFires, timezoneOption } from "./missed-fires.js";
import type { ScheduleState } from "./schedule-state.js";

/** The part of the run manager the scheduler drives. */
export interface ScheduledRuns {
  start(agentId: string, task: string, trigger: RunTrigger): Promise<RunRecord>;
  unfinishedRuns(agentId: string): number;
}

export interface SchedulerOptions {
  runs: ScheduledRuns;
  events: EventPublisher;
  state: ScheduleState;
  logger: Logger;
  /** The clock used to decide missed fires and to stamp the state; croner fires on real time. */
  now?: () => Date;
}

/** The task a scheduled run gets when neither the schedule nor the agent names one. */
export const DEFAULT_SCHEDULED_TASK = "Scheduled run";

interface ScheduledAgent {
  definition: AgentDefinition;
  schedule: Schedule;
  /** cron + timezone: a change of either replaces the croner job. */
  key: string;
  job: Cron;
}

/**
 * Fires each valid, enabled agent's `schedule` on croner, in its timezone. `apply()` is called with
 * every definition at start and on each registry change: schedules are added, replaced and removed
 * to match. The first `apply()` also settles fires missed while the daemon was down (`on_missed`).
 */
export class Scheduler {
  readonly #options: SchedulerOptions;
  readonly #now: () => Date;
  readonly #scheduled = new Map<string, ScheduledAgent>();
  #started = false;
  #stopped = false;

  constructor(options: SchedulerOptions) {
    this.#options = options;
    this.#now = options.now ?? (() => new Date());
  }

  /** Makes the schedules match `definitions` (every agent with a valid version). */
  apply(definitions: AgentDefinition[]): void {
    if (this.#stopped) return;
    const firstApply = !this.#started;
    this.#started = true;
    const wanted = new Map<string, { definition: AgentDefinition; schedule: Schedule }>();
    for (const definition of definitions) {
      const { schedule, enabled } = definition.frontmatter;
      if (schedule && enabled) wanted.set(definition.id, { definition, schedule });
    }
    for (const [agentId, scheduled] of this.#scheduled) {
      if (wanted.has(agentId)) continue;
      scheduled.job.stop();
      this.#scheduled.delete(agentId);
      this.#options.state.delete(agentId);
      this.#options.logger.info({ agent: agentId }, "schedule removed");
    }
    for (const [agentId, { definition, schedule }] of wanted) {
      const key = JSON.stringify([schedule.cron, schedule.timezone ?? null]);
      const current = this.#scheduled.get(agentId);
      if (current?.key === key) {
        current.definition = definition;
        current.schedule = schedule;
        continue;
      }
      current?.job.stop();
      if (firstApply) this.#settleMissedFires(definition, schedule);
      else if (!current) this.#markChecked(agentId);
      const job = new Cron(schedule.cron, { ...timezoneOption(schedule), catch: true }, () =>
        this.#fire(agentId),
      );
      this.#scheduled.set(agentId, { definition, schedule, key, job });
      this.#options.logger.info(
        { agent: agentId, cron: schedule.cron, next: job.nextRun()?.toISOString() },
        current ? "schedule changed" : "schedule added",
      );
    }
  }

  /** When the agent's schedule fires next; undefined for an agent without an active schedule. */
  nextFire(agentId: string): Date | undefined {
    return this.#scheduled.get(agentId)?.job.nextRun() ?? undefined;
  }

  /** Stops every job; later `apply()` calls do nothing. */
  stop(): void {
    this.#stopped = true;
    for (const scheduled of this.#scheduled.values()) scheduled.job.stop();
    this.#scheduled.clear();
  }

  #fire(agentId: string): void {
    const scheduled = this.#scheduled.get(agentId);
    if (!scheduled || this.#stopped) return;
    const scheduledFor = scheduled.job.previousRuns(1, new Date())[0] ?? new Date();
    const previous = this.#options.state.get(agentId);
    this.#options.state.set(agentId, {
      checked_at: previous?.checked_at ?? scheduledFor.toISOString(),
      last_fire: scheduledFor.toISOString(),
    });
    const { definition, schedule } = scheduled;
    if (schedule.overlap === "skip" && this.#options.runs.unfinishedRuns(agentId) > 0) {
      this.#options.events.publish({
        agent: agentId,
        run: null,
        type: "skipped",
        data: {
          scheduled_for: scheduledFor.toISOString(),
          reason: "overlap",
          message: "the previous run is still going and the schedule says overlap: skip",
        },
      });
      return;
    }
    const trigger: RunTrigger = { kind: "schedule", scheduled_for: scheduledFor.toISOString() };
    void this.#startRun(definition, schedule, trigger);
  }

  /** SPEC 8: a fire due while the daemon was down runs once now (`run_once`) or is recorded (`skip`). */
  #settleMissedFires(definition: AgentDefinition, schedule: Schedule): void {
    const agentId = definition.id;
    const since = this.#options.state.accountedUntil(agentId);
    const now = this.#now();
    const missed = since ? missedFires(schedule, since, now) : undefined;
    this.#markChecked(agentId);
    if (!missed) return;
    const scheduledFor = missed.latest.toISOString();
    this.#options.logger.warn(
      { agent: agentId, missed: missed.count, latest: scheduledFor, on_missed: schedule.on_missed },
      "schedule fires were missed while the daemon was down",
    );
    if (schedule.on_missed === "skip") {
      this.#publishMissed(agentId, scheduledFor, "skip");
      return;
    }
    void this.#startRun(definition, schedule, { kind: "missed", scheduled_for: scheduledFor }).then((run) =>
      this.#publishMissed(agentId, scheduledFor, "run_once", run?.id),
    );
  }

  #publishMissed(agentId: string, scheduledFor: string, onMissed: "run_once" | "skip", run?: string): void {
    this.#options.events.publish({
      agent: agentId,
      run: run ?? null,
      type: "missed",
      data: { scheduled_for: scheduledFor, on_missed: onMissed, ...(run === undefined ? {} : { run }) },
    });
  }

  #markChecked(agentId: string): void {
    const previous = this.#options.state.get(agentId);
    this.#options.state.set(agentId, { ...previous, checked_at: this.#now().toISOString() });
  }

  async #startRun(
    definition: AgentDefinition,
    schedule: Schedule,
    trigger: Extract<RunTrigger, { scheduled_for: string }>,
  ): Promise<RunRecord | undefined> {
    const task = schedule.task ?? definition.frontmatter.task ?? DEFAULT_SCHEDULED_TASK;
    try {
      return await this.#options.runs.start(definition.id, task, trigger);
    } catch (error) {
      if (AgentdError.is(error, "SHUTTING_DOWN")) return undefined;
      const reason = AgentdError.is(error) && error.details?.state === "disabled" ? "disabled" : "invalid";
      this.#options.events.publish({
        agent: definition.id,
        run: null,
        type: "skipped",
        data: {
          scheduled_for: trigger.scheduled_for,
          reason,
          message: error instanceof Error ? error.message : String(error),
        },
      });
      return undefined;
    }
  }
}
