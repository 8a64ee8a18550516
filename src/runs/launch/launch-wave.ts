import { clearTimeout, setTimeout } from "node:timers";

/**
 * How long work kept for after the launches waits at most while launches go on without a pause
 * (a burst of hundreds of runs): past it, the work goes on anyway, so nothing waits for long.
 */
export const AFTER_LAUNCHES_LONGEST_WAIT_MILLISECONDS = 250;

/**
 * The launches under way, and the work that waits for them. A launch is under way from its
 * dispatch until the turn after its worker started (by then the LLM worker has sent its first
 * model request: nothing between its start and the request waits for I/O). Work that no launch
 * needs before its first request — a launched run's record file, its event log's creation, the
 * end of a run that already answered, the schedule state — is handed to `afterLaunches`: it runs
 * once no launch is under way, in the order given, so that 20 runs due in the same second all
 * send their first request before any of that work takes the event loop or libuv's threads. None
 * of it is a durability step that something reported waits for: each says so where it is deferred.
 */
export class LaunchWave {
  #underway = 0;
  readonly #waiting: Array<() => void> = [];
  #longestWait: NodeJS.Timeout | undefined;

  /** A launch begins; the returned function (idempotent) says it is no longer under way. */
  begin(): () => void {
    this.#underway += 1;
    let ended = false;
    return () => {
      if (ended) return;
      ended = true;
      this.#underway -= 1;
      if (this.#underway === 0) this.#runWaiting();
    };
  }

  /** Launches under way now. */
  get underway(): number {
    return this.#underway;
  }

  /**
   * Runs `job` now when no launch is under way, else once none is (AFTER_LAUNCHES_LONGEST_WAIT_MILLISECONDS
   * at most), after the jobs given before it. A job must not throw.
   */
  afterLaunches(job: () => void): void {
    if (this.#underway === 0 && this.#waiting.length === 0) {
      job();
      return;
    }
    this.#waiting.push(job);
    this.#longestWait ??= setTimeout(() => {
      this.#longestWait = undefined;
      this.#runWaiting();
    }, AFTER_LAUNCHES_LONGEST_WAIT_MILLISECONDS);
  }

  /** Runs every job kept so far now (shutdown: nothing is left waiting). */
  flush(): void {
    this.#runWaiting();
  }

  #runWaiting(): void {
    clearTimeout(this.#longestWait);
    this.#longestWait = undefined;
    // Jobs added while these run (a job that itself defers) run in this same pass.
    while (this.#waiting.length > 0) {
      const job = this.#waiting.shift() as () => void;
      job();
    }
  }
}
