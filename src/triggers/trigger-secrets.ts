import type { Logger } from "../logging/logger.js";
import type { Vault } from "../vault/vault.js";

/** How soon after a read a missing secret makes the vault be read again. */
const REREAD_MILLISECONDS = 5_000;

/**
 * The webhook secrets, read from the vault ahead of the deliveries: a delivery is checked in
 * memory only, so how long the vault takes to answer never tells a known trigger from an unknown
 * one. Read again whenever the definitions change, and soon after a delivery found its secret
 * missing (set with `agentd secrets set` while the daemon runs).
 */
export class TriggerSecrets {
  readonly #vault: Vault;
  readonly #logger: Logger;
  #values = new Map<string, string>();
  #names: readonly string[] = [];
  #loading: Promise<void> | undefined;
  readonly #now: () => number;
  #readAt = Number.NEGATIVE_INFINITY;

  constructor(vault: Vault, logger: Logger, now: () => number) {
    this.#vault = vault;
    this.#logger = logger;
    this.#now = now;
  }

  /** Reads `names` from the vault; resolves once they are known. */
  load(names: readonly string[]): Promise<void> {
    this.#names = names;
    this.#readAt = this.#now();
    const loading = this.#read(names);
    this.#loading = loading;
    return loading.finally(() => {
      if (this.#loading === loading) this.#loading = undefined;
    });
  }

  /** The value of a secret, or undefined when the vault has none (yet). */
  get(name: string): string | undefined {
    const value = this.#values.get(name);
    // At most one read per interval: deliveries to a trigger without its secret cannot hammer the vault.
    if (value === undefined && this.#now() - this.#readAt >= REREAD_MILLISECONDS) {
      this.#loading ??= this.load(this.#names);
    }
    return value;
  }

  async #read(names: readonly string[]): Promise<void> {
    const values = new Map<string, string>();
    for (const name of names) {
      try {
        const value = await this.#vault.get(name);
        if (value !== undefined && value !== "") values.set(name, value);
        else
          this.#logger.warn(
            { secret: name },
            "a webhook trigger's secret is not in the vault: its deliveries are refused",
          );
      } catch (error) {
        this.#logger.warn({ err: error, secret: name }, "could not read a webhook trigger's secret");
      }
    }
    this.#values = values;
  }
}
