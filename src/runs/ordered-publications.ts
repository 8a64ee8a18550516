import type { Logger } from "../logging/logger.js";

/**
 * Each run's events in the order they were made, while its status events wait for their record to
 * reach disk. A status change is published once its record is written (`afterWrite`); an event the
 * worker publishes meanwhile waits behind it (`publish`), and goes out at once when nothing of its
 * run waits, as it always does outside a status change. Publication never throws back into the
 * caller: a write or publish failure is logged, and the status event still goes out after a failed
 * write (the store already reported the failure; a run whose end is never told would hang its
 * followers).
 */
export class OrderedPublications {
  readonly #logger: Logger;
  /** Run id → the last publication of the run still waiting. */
  readonly #tails = new Map<string, Promise<void>>();
  readonly #settledWaiters = new Set<() => void>();

  constructor(logger: Logger) {
    this.#logger = logger;
  }

  /**
   * Publishes once `written` resolved and every earlier publication of the run went out. Without
   * a write under way (`written` undefined) and nothing waiting, publishes at once. Resolves once
   * published.
   */
  afterWrite(run: string, written: Promise<void> | void, publish: () => void): Promise<void> {
    const tail = this.#tails.get(run);
    if (written === undefined && tail === undefined) {
      this.#publishNow(run, publish);
      return Promise.resolve();
    }
    const published = (async () => {
      await tail;
      try {
        await written;
      } catch (error) {
        this.#logger.error({ err: error, run }, "could not write a run record");
      }
      this.#publishNow(run, publish);
    })();
    this.#tails.set(run, published);
    void published.then(() => this.#settle(run, published));
    return published;
  }

  /** An event of the run: published at once, or after what of the run waits to be published. */
  publish(run: string, publish: () => void): void {
    if (!this.#tails.has(run)) {
      publish();
      return;
    }
    void this.afterWrite(run, undefined, publish);
  }

  /** Resolves once every publication of the run asked for so far went out. */
  published(run: string): Promise<void> {
    return this.#tails.get(run) ?? Promise.resolve();
  }

  /** Publications still waiting for their write, of every run. */
  get waiting(): number {
    return this.#tails.size;
  }

  /** Resolves once no publication of any run waits. */
  settled(): Promise<void> {
    if (this.#tails.size === 0) return Promise.resolve();
    return new Promise((resolve) => this.#settledWaiters.add(resolve));
  }

  #publishNow(run: string, publish: () => void): void {
    try {
      publish();
    } catch (error) {
      this.#logger.error({ err: error, run }, "could not publish an event of a run");
    }
  }

  #settle(run: string, published: Promise<void>): void {
    if (this.#tails.get(run) === published) this.#tails.delete(run);
    if (this.#tails.size > 0) return;
    for (const resolve of [...this.#settledWaiters]) resolve();
    this.#settledWaiters.clear();
  }
}
