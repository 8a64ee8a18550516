import type { AgentDefinition } from "../definitions/agent-definition.js";
import type { Schedule } from "../definitions/agent-schema.js";
import { AgentdError } from "../errors/agentd-error.js";
import type { EventPublisher } from "../events/event-bus.js";
import type { Logger } from "../logging/logger.js";
import type { RunRecord, RunTrigger } from "../run-vocabulary/run-record.js";
import { nextFireAfter, patternKey } from "./cron-patterns.js";
import { type DueFire, FireTimer } from "./fire-timer.js";
import { missedFireTimes } from "./missed-fires.js";
import type { ScheduleStates } from "./schedule-states.js";
import { type Clock, systemClock } from "../clock/clock.js";

/** The part of the run manager the scheduler drives. */
export interface ScheduledRuns {
  start(agentId: string, task: string, trigger: RunTrigger): Promise<RunRecord>;
  unfinishedRuns(agentId: string): number;
  /** Runs of the agent waiting for a slot (not started yet). */
  queuedRuns(agentId: string): number;
  /** The agent's newest run: its `scheduled_for` accounts for a fire even if the state file lags. */
  lastRun(agentId: string): RunRecord | undefined;
  /**
   * Runs `job` once the runs being launched sent their first model request (RunManager); without
   * it, at once. A wake's schedule state waits for it: the fires' own runs account for them
   * meanwhile (`lastRun`).
   */
  afterLaunches?(job: () => void): void;
}

export interface SchedulerOptions {
  runs: ScheduledRuns;
  events: EventPublisher;
  state: ScheduleStates;
  logger: Logger;
  /** Time and the one timer (default: the system clock). */
  clock?: Clock;
  /** Under `overlap: queue`, fires queued behind a running run at most (config `scheduler.queue_limit`). */
  queueLimit?: number;
  /**
   * How often fires nobody ran nor reported are looked for (on `clock`): due while the store was
   * away, or claimed by a node that died before writing its run. Default FIRE_SWEEP_MILLISECONDS.
   */
  fireSweepMilliseconds?: number;
}

/** How often unsettled fires are looked for, by default. */
export const FIRE_SWEEP_MILLISECONDS = 5_000;

let localTime: string | undefined;

/**
 * A schedule's pattern as kept in its state: for a schedule without `timezone`, with what local
 * time meant when it was kept (TZ and this year's winter and summer offsets), so a restart under
 * another zone works its fires out again. Not Intl's zone name: its first use costs ~60 ms.
 */
function storedPattern(schedule: Schedule): string {
  if (schedule.timezone) return `${schedule.cron} | ${schedule.timezone}`;
  if (localTime === undefined) {
    const year = new Date().getFullYear();
    const offsets = [0, 6].map((month) => new Date(year, month, 1).getTimezoneOffset());
    localTime = `local ${process.env.TZ ?? ""} ${offsets.join(" ")}`;
  }
  return `${schedule.cron} | ${localTime}`;
}

/** The task a scheduled run gets when neither the schedule nor the agent names one. */
export const DEFAULT_SCHEDULED_TASK = "Scheduled run";
const DEFAULT_QUEUE_LIMIT = 10;

interface ScheduledAgent {
  definition: AgentDefinition;
  schedule: Schedule;
  /** cron + timezone: a change of either recomputes the next fire. */
  key: string;
}

/**
 * Fires each valid, enabled agent's `schedule` in its timezone. Fire times come from croner's
 * pattern arithmetic, but no croner job runs per agent: one timer waits for the soonest fire, and
 * a run's `scheduled_for` is the fire time the timer was armed for, so a timer landing on the exact
 * millisecond never names the previous occurrence. `apply()` is called with every definition at
 * start and on each registry change; the first `apply()` also settles fires missed while the daemon
 * was down (`on_missed`). `schedules.json` is written once per `apply()` and once per wake.
 */
export class Scheduler {
  readonly #options: SchedulerOptions;
  readonly #clock: Clock;
  readonly #queueLimit: number;
  readonly #scheduled = new Map<string, ScheduledAgent>();
  readonly #timer: FireTimer;
  #started = false;
  #stopped = false;
  /** Cancels the next sweep of unsettled fires. */
  #cancelSweep: (() => void) | undefined;
  #sweeping = false;

  constructor(options: SchedulerOptions) {
    this.#options = options;
    this.#clock = options.clock ?? systemClock;
    this.#queueLimit = options.queueLimit ?? DEFAULT_QUEUE_LIMIT;
    this.#timer = new FireTimer(this.#clock, (fires) => this.#onDue(fires));
  }

  /**
   * Runs or reports, under each agent's `on_missed`, the fires nobody ran nor reported: one run
   * (`run_once`, trigger `missed`) or none (`skip`) per agent, and one `missed` event with how many.
   * Called at the first `apply()` and then every `fireSweepMilliseconds` on the scheduler's clock;
   * resolves once the runs are recorded and the reports published.
   */
  async sweepUnsettledFires(): Promise<void> {
    if (this.#stopped || this.#sweeping) return;
    this.#sweeping = true;
    try {
      const fires = await this.#options.state.unsettledFires([...this.#scheduled.keys()]);
      const byAgent = new Map<string, string[]>();
      for (const { agent, scheduledFor } of fires)
        byAgent.set(agent, [...(byAgent.get(agent) ?? []), scheduledFor]);
      await Promise.all([...byAgent].map(([agentId, times]) => this.#settleUnsettled(agentId, times)));
    } catch (error) {
      this.#options.logger.warn({ err: error }, "could not settle fires left unsettled");
    } finally {
      this.#sweeping = false;
    }
  }

  #armSweep(): void {
    if (this.#stopped) return;
    const every = this.#options.fireSweepMilliseconds ?? FIRE_SWEEP_MILLISECONDS;
    this.#cancelSweep = this.#clock.setTimer(() => {
      void this.sweepUnsettledFires().finally(() => this.#armSweep());
    }, every);
  }

  async #settleUnsettled(agentId: string, times: string[]): Promise<void> {
    const scheduledFor = times.at(-1) as string;
    const scheduled = this.#scheduled.get(agentId);
    // An agent no longer scheduled (removed, disabled) runs nothing: its fires are reported.
    const onMissed = scheduled?.schedule.on_missed ?? "skip";
    this.#options.logger.warn(
      { agent: agentId, missed: times.length, latest: scheduledFor, on_missed: onMissed },
      "schedule fires were not run on time (the daemon down or late, the store away, or a node died): on_missed applies",
    );
    if (scheduled === undefined || onMissed === "skip") {
      this.#publishMissed(agentId, scheduledFor, "skip", times.length);
      this.#options.state.settleFires(agentId, times);
      return;
    }
    const { definition, schedule } = scheduled;
    // The run's record says how many fires it stands for and settles them: the `missed` event
    // after it is the notice, and a crash between the two loses the notice, never the account.
    const run = await this.#startRun(
      definition,
      schedule,
      { kind: "missed", scheduled_for: scheduledFor, fires: times.length },
      times,
    );
    if (run) this.#publishMissed(agentId, scheduledFor, "run_once", times.length, run.id);
  }

  /** Makes the schedules match `definitions` (every agent with a valid version). */
  apply(definitions: AgentDefinition[]): void {
    if (this.#stopped) return;
    const firstApply = !this.#started;
    this.#started = true;
    const { logger, state } = this.#options;
    const wanted = new Map<string, { definition: AgentDefinition; schedule: Schedule }>();
    for (const definition of definitions) {
      const { schedule, enabled } = definition.frontmatter;
      if (schedule && enabled) wanted.set(definition.id, { definition, schedule });
    }
    for (const agentId of this.#scheduled.keys()) {
      if (wanted.has(agentId)) continue;
      this.#timer.delete(agentId);
      this.#scheduled.delete(agentId);
      state.delete(agentId);
      logger.info({ agent: agentId }, "schedule removed");
    }
    const now = this.#clock.now();
    for (const [agentId, { definition, schedule }] of wanted) {
      const key = patternKey(schedule);
      const current = this.#scheduled.get(agentId);
      this.#scheduled.set(agentId, { definition, schedule, key });
      if (current?.key === key) continue;
      const known = firstApply ? this.#knownNextFire(agentId, schedule, now) : undefined;
      if (known !== undefined) this.#markChecked(agentId, now);
      else if (firstApply) this.#settleMissedFires(definition, schedule, now);
      else if (!current) this.#markChecked(agentId, now);
      this.#waitFor(agentId, schedule, known ?? nextFireAfter(schedule, now), now);
      // One line per agent at start would be 1,000 lines for 1,000 agents: changes only.
      logger[firstApply ? "debug" : "info"](
        { agent: agentId, cron: schedule.cron, next: this.nextFire(agentId)?.toISOString() },
        current ? "schedule changed" : "schedule added",
      );
    }
    state.flush();
    if (firstApply) {
      logger.info({ schedules: this.#scheduled.size }, "schedules started");
      void this.sweepUnsettledFires().finally(() => this.#armSweep());
    }
  }

  /** When the agent's schedule fires next; undefined for an agent without an active schedule. */
  nextFire(agentId: string): Date | undefined {
    const at = this.#timer.get(agentId);
    return at === undefined ? undefined : new Date(at);
  }

  /** Stops the timer; later `apply()` calls do nothing. */
  stop(): void {
    this.#stopped = true;
    this.#cancelSweep?.();
    this.#timer.stop();
    this.#scheduled.clear();
  }

  /**
   * Every fire due by now, oldest first: every run is started before any next fire is worked out
   * (20 agents due in the same second do not wait for each other's croner arithmetic), then the
   * next fires and the state, written once.
   */
  #onDue(fires: DueFire[]): void {
    if (this.#stopped) return;
    const now = this.#clock.now();
    const due = fires.flatMap(({ agentId, at }) => {
      const scheduled = this.#scheduled.get(agentId);
      return scheduled ? [{ scheduled, at, scheduledFor: new Date(at).toISOString() }] : [];
    });
    const starts = due.map(({ scheduled, scheduledFor }) => this.#fire(scheduled, scheduledFor));
    let wokeLate = false;
    // Agents on the same cron due at the same time share their next fire: worked out once.
    const followingOf = new Map<string, number | undefined>();
    for (const { scheduled, at, scheduledFor } of due) {
      const agentId = scheduled.definition.id;
      const { schedule } = scheduled;
      const sameFires = `${scheduled.key}\u0000${at}`;
      if (!followingOf.has(sameFires)) followingOf.set(sameFires, nextFireAfter(schedule, at));
      const following = followingOf.get(sameFires);
      // A wake later than the following fire (a loaded or suspended machine): those fires were
      // missed here. Another node may have run them: they are claimed like the others, and the
      // ones this node gets are run or reported under on_missed by the sweep started below.
      const late =
        following !== undefined && following <= now
          ? missedFireTimes(schedule, new Date(at), new Date(now))
          : [];
      const latest = late.at(-1);
      const previous = this.#options.state.get(agentId);
      this.#options.state.set(agentId, {
        checked_at: previous?.checked_at ?? scheduledFor,
        last_fire: latest ?? scheduledFor,
      });
      if (latest === undefined) this.#waitFor(agentId, schedule, following, at);
      else {
        this.#waitFor(agentId, schedule, nextFireAfter(schedule, now), now);
        this.#options.state.firesMissed(agentId, late);
        wokeLate = true;
      }
    }
    // Written once the fires' runs are recorded and have sent their first model request, not in
    // their way: until then each run's record says which fire it stands for (#accountedUntil), so
    // a crash meanwhile runs no fire twice (a fire skipped as overlapping may then be caught up
    // under on_missed, as one missed while the daemon was down).
    const { runs, state } = this.#options;
    void Promise.allSettled(starts).then(() =>
      runs.afterLaunches ? runs.afterLaunches(() => state.flush()) : state.flush(),
    );
    if (wokeLate) void this.sweepUnsettledFires();
  }

  /** Fires once across every daemon sharing the schedules: the node that claims the fire runs it. */
  #fire(scheduled: ScheduledAgent, scheduledFor: string): Promise<unknown> {
    const claimed = this.#options.state.claimFire(scheduled.definition.id, scheduledFor);
    if (claimed === true) return this.#fireClaimed(scheduled, scheduledFor);
    if (claimed === false) return Promise.resolve();
    return claimed.then((won) => (won ? this.#fireClaimed(scheduled, scheduledFor) : undefined));
  }

  #fireClaimed(scheduled: ScheduledAgent, scheduledFor: string): Promise<unknown> {
    const { definition, schedule } = scheduled;
    const agentId = definition.id;
    const { runs } = this.#options;
    if (runs.unfinishedRuns(agentId) > 0) {
      if (schedule.overlap === "skip") {
        this.#publishSkipped(
          agentId,
          scheduledFor,
          "overlap",
          "the previous run is still going and the schedule says overlap: skip",
        );
        this.#options.state.settleFires(agentId, [scheduledFor]);
        return Promise.resolve();
      }
      if (runs.queuedRuns(agentId) >= this.#queueLimit) {
        this.#publishSkipped(
          agentId,
          scheduledFor,
          "queue_full",
          `${this.#queueLimit} fires are already queued behind the running one (config scheduler.queue_limit)`,
        );
        this.#options.state.settleFires(agentId, [scheduledFor]);
        return Promise.resolve();
      }
    }
    return this.#startRun(definition, schedule, { kind: "schedule", scheduled_for: scheduledFor }, [
      scheduledFor,
    ]);
  }

  /**
   * SPEC 8: fires due while the daemon was down run once now (`run_once`) or are recorded (`skip`).
   * Each is claimed like a fire on time (on a cluster, another node may have run it meanwhile):
   * the sweep that follows the first `apply()` runs or reports the ones this daemon gets.
   */
  #settleMissedFires(definition: AgentDefinition, schedule: Schedule, now: number): void {
    const agentId = definition.id;
    const since = this.#accountedUntil(agentId);
    const missed = since ? missedFireTimes(schedule, since, new Date(now)) : [];
    this.#markChecked(agentId, now);
    if (missed.length === 0) return;
    this.#options.logger.warn(
      { agent: agentId, missed: missed.length, latest: missed.at(-1), on_missed: schedule.on_missed },
      "schedule fires were missed while the daemon was down",
    );
    this.#options.state.firesMissed(agentId, missed);
  }

  /**
   * Arms the agent's next fire, `fire` being the first of its pattern after `after`, and keeps both
   * in its state for the next start.
   */
  #waitFor(agentId: string, schedule: Schedule, fire: number | undefined, after: number): void {
    this.#timer.set(agentId, fire);
    const { next: _previous, ...state } = this.#options.state.get(agentId) ?? {
      checked_at: new Date(after).toISOString(),
    };
    const next =
      fire === undefined
        ? {}
        : {
            next: {
              fire: new Date(fire).toISOString(),
              after: new Date(after).toISOString(),
              pattern: storedPattern(schedule),
            },
          };
    this.#options.state.set(agentId, { ...state, ...next });
  }

  /**
   * The next fire a previous start recorded, when it still holds: same pattern (and local time
   * zone), still ahead, and counted from a time whose fires are accounted for — then no fire was
   * missed since (it would have been the recorded one). 1,000 agents restart without building a
   * cron pattern. Undefined otherwise: the fires are worked out from the pattern.
   */
  #knownNextFire(agentId: string, schedule: Schedule, now: number): number | undefined {
    const next = this.#options.state.get(agentId)?.next;
    if (!next || next.pattern !== storedPattern(schedule)) return undefined;
    const fire = Date.parse(next.fire);
    const after = Date.parse(next.after);
    const accounted = this.#accountedUntil(agentId)?.getTime();
    if (!(fire > now) || accounted === undefined || !(after <= accounted)) return undefined;
    return fire;
  }

  /** Fires up to this time are accounted for: by the state file, or by a run a fire started. */
  #accountedUntil(agentId: string): Date | undefined {
    const fromState = this.#options.state.accountedUntil(agentId);
    const trigger = this.#options.runs.lastRun(agentId)?.trigger;
    const fromRun = trigger && "scheduled_for" in trigger ? Date.parse(trigger.scheduled_for) : Number.NaN;
    if (!fromState) return undefined;
    return Number.isNaN(fromRun) || fromRun <= fromState.getTime() ? fromState : new Date(fromRun);
  }

  #publishMissed(
    agentId: string,
    scheduledFor: string,
    onMissed: "run_once" | "skip",
    count: number,
    run?: string,
  ): void {
    // An event of the agent, not of the catch-up run (named in `data.run`): a run handed to
    // another node of the cluster before this report is written must not take the report with it.
    this.#options.events.publish({
      agent: agentId,
      run: null,
      type: "missed",
      data: {
        scheduled_for: scheduledFor,
        on_missed: onMissed,
        count,
        ...(run === undefined ? {} : { run }),
      },
    });
  }

  #publishSkipped(
    agentId: string,
    scheduledFor: string,
    reason: "overlap" | "queue_full" | "disabled" | "invalid",
    message: string,
  ): void {
    this.#options.events.publish({
      agent: agentId,
      run: null,
      type: "skipped",
      data: { scheduled_for: scheduledFor, reason, message },
    });
  }

  #markChecked(agentId: string, now: number): void {
    const previous = this.#options.state.get(agentId);
    this.#options.state.set(agentId, { ...previous, checked_at: new Date(now).toISOString() });
  }

  /**
   * Starts the run of `fires` (their latest, or the one). A store that cannot record it now keeps
   * the fires for the next sweep (`on_missed` then applies); a run refused otherwise (the agent
   * disabled or invalid) is reported `skipped`, and the fires are settled.
   */
  async #startRun(
    definition: AgentDefinition,
    schedule: Schedule,
    trigger: Extract<RunTrigger, { scheduled_for: string }>,
    fires: string[],
  ): Promise<RunRecord | undefined> {
    const task = schedule.task ?? definition.frontmatter.task ?? DEFAULT_SCHEDULED_TASK;
    try {
      return await this.#options.runs.start(definition.id, task, trigger);
    } catch (error) {
      if (AgentdError.is(error, "SHUTTING_DOWN")) return undefined;
      if (STORE_FAILURES.some((code) => AgentdError.is(error, code))) {
        this.#options.logger.warn(
          { err: error, agent: definition.id, scheduled_for: trigger.scheduled_for },
          "a scheduled run could not be recorded: it is run or reported (on_missed) once the store takes it",
        );
        this.#options.state.fireNotStarted(definition.id, fires);
        return undefined;
      }
      const reason = AgentdError.is(error) && error.details?.state === "disabled" ? "disabled" : "invalid";
      this.#publishSkipped(
        definition.id,
        trigger.scheduled_for,
        reason,
        error instanceof Error ? error.message : String(error),
      );
      this.#options.state.settleFires(definition.id, fires);
      return undefined;
    }
  }
}

/** Errors of a store that cannot record a run right now: the fire waits for the next sweep. */
const STORE_FAILURES = ["STORE_UNAVAILABLE", "STORE_WRITE_FAILED", "STORAGE_FULL"] as const;
