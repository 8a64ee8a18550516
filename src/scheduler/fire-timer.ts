import type { Clock } from "../clock/clock.js";

/**
 * The longest the timer sleeps before it reads the wall clock again. Its waits are durations
 * (monotonic), fire times are wall-clock times: a clock set forward (an operator, NTP after a
 * suspend) past a fire armed hours ahead is noticed within this, not when the old wait runs out.
 */
export const MAX_FIRE_WAIT_MILLISECONDS = 60_000;

/** A fire that is due: the agent and the time it was due at. */
export interface DueFire {
  agentId: string;
  at: number;
}

/**
 * The next fire time of every scheduled agent behind one timer, armed for the soonest: an idle
 * scheduled agent costs a map entry, not a timer or a croner job. On waking, every fire due by now
 * is handed over at once (oldest first); the handler sets each agent's next fire.
 */
export class FireTimer {
  readonly #clock: Clock;
  readonly #onDue: (fires: DueFire[]) => void;
  readonly #next = new Map<string, number>();
  #cancel: (() => void) | undefined;
  #armedFor: number | undefined;
  #handling = false;

  constructor(clock: Clock, onDue: (fires: DueFire[]) => void) {
    this.#clock = clock;
    this.#onDue = onDue;
  }

  get(agentId: string): number | undefined {
    return this.#next.get(agentId);
  }

  /** Sets (or, with undefined, removes) the agent's next fire time. */
  set(agentId: string, at: number | undefined): void {
    const previous = this.#next.get(agentId);
    if (at === undefined) this.#next.delete(agentId);
    else this.#next.set(agentId, at);
    if (this.#handling) return;
    if (at !== undefined && (this.#armedFor === undefined || at < this.#armedFor)) this.#armAt(at);
    else if (previous !== undefined && previous === this.#armedFor) this.#arm();
  }

  delete(agentId: string): void {
    this.set(agentId, undefined);
  }

  stop(): void {
    this.#next.clear();
    this.#disarm();
  }

  #arm(): void {
    let soonest: number | undefined;
    for (const at of this.#next.values()) if (soonest === undefined || at < soonest) soonest = at;
    if (soonest === undefined) this.#disarm();
    else this.#armAt(soonest);
  }

  #armAt(at: number): void {
    this.#disarm();
    this.#armedFor = at;
    const wait = Math.min(at - this.#clock.now(), MAX_FIRE_WAIT_MILLISECONDS);
    this.#cancel = this.#clock.setTimer(() => this.#wake(), wait);
  }

  #disarm(): void {
    this.#cancel?.();
    this.#cancel = undefined;
    this.#armedFor = undefined;
  }

  #wake(): void {
    this.#cancel = undefined;
    this.#armedFor = undefined;
    const now = this.#clock.now();
    const due: DueFire[] = [];
    for (const [agentId, at] of this.#next) if (at <= now) due.push({ agentId, at });
    if (due.length > 0) {
      due.sort((left, right) => left.at - right.at);
      this.#handling = true;
      try {
        this.#onDue(due);
      } finally {
        this.#handling = false;
      }
    }
    // Early wake (a wait is capped at MAX_FIRE_WAIT_MILLISECONDS) or the next soonest: one scan either way.
    this.#arm();
  }
}
