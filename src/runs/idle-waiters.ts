/** Callers waiting for "no run in flight", each with its own deadline. */
export class IdleWaiters {
  readonly #waiters = new Set<() => void>();

  /** Resolves true when `notifyIdle()` is called (or `isIdle` already holds), false at the deadline. */
  wait(isIdle: boolean, timeoutMilliseconds: number): Promise<boolean> {
    if (isIdle) return Promise.resolve(true);
    return new Promise((resolve) => {
      const settle = (idle: boolean) => {
        clearTimeout(timer);
        this.#waiters.delete(onIdle);
        resolve(idle);
      };
      const onIdle = () => settle(true);
      const timer = setTimeout(() => settle(false), timeoutMilliseconds);
      this.#waiters.add(onIdle);
    });
  }

  notifyIdle(): void {
    for (const waiter of [...this.#waiters]) waiter();
  }
}
