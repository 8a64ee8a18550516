/** A key → values index where a key may hold several values (an id used by two files). */
export class MultiIndex {
  private readonly entries = new Map<string, Set<string>>();

  add(key: string, value: string): void {
    const values = this.entries.get(key);
    if (values) values.add(value);
    else this.entries.set(key, new Set([value]));
  }

  delete(key: string, value: string): void {
    const values = this.entries.get(key);
    values?.delete(value);
    if (values?.size === 0) this.entries.delete(key);
  }

  /** The values of `key`, sorted, as a new array. */
  get(key: string): string[] {
    return [...(this.entries.get(key) ?? [])].sort();
  }

  keys(): IterableIterator<string> {
    return this.entries.keys();
  }
}
