/**
 * Runs tasks one at a time per key, in the order they came: two runs writing the same memory in this
 * process never interleave their read-modify-write. Keys no task waits on are forgotten.
 */
export class KeyMutex {
  readonly #tails = new Map<string, Promise<unknown>>();

  async run<Result>(key: string, task: () => Promise<Result>): Promise<Result> {
    const before = this.#tails.get(key) ?? Promise.resolve();
    const result = before.then(task, task);
    const tail = result.then(
      () => undefined,
      () => undefined,
    );
    this.#tails.set(key, tail);
    try {
      return await result;
    } finally {
      if (this.#tails.get(key) === tail) this.#tails.delete(key);
    }
  }
}
