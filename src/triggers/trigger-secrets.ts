import type { Clock } from "../clock/clock.js";
import type { Logger } from "../logging/logger.js";
import { readSecrets, type SecretsRead } from "../vault/read-secrets.js";
import type { Vault } from "../vault/vault.js";

/** How soon after a read a missing secret makes the vault be read again. */
const REREAD_MILLISECONDS = 5_000;
/**
 * How often the secrets are read again anyway, so a secret changed or removed in the vault while
 * the daemon runs (`agentd secrets set` / `rm`: a leaked webhook secret rotated) stops verifying
 * deliveries within that time. The keychain is asked less often: each read is a call to the OS.
 */
const REFRESH_MILLISECONDS: Record<string, number> = { file: 5_000, keychain: 60_000 };

/**
 * The webhook secrets, read from the vault ahead of the deliveries: a delivery is checked in
 * memory only, so how long the vault takes to answer never tells a known trigger from an unknown
 * one. Read again whenever the definitions change, soon after a delivery found its secret missing
 * (set with `agentd secrets set` while the daemon runs), and on a timer (REFRESH_MILLISECONDS) for
 * a vault whose values can change under the daemon (not `env`: the daemon's environment is fixed).
 */
export class TriggerSecrets {
  readonly #vault: Vault;
  readonly #logger: Logger;
  readonly #clock: Clock;
  #values = new Map<string, string>();
  #names: readonly string[] = [];
  #loading: Promise<void> | undefined;
  #readAt = Number.NEGATIVE_INFINITY;
  #cancelRefresh: (() => void) | undefined;
  #closed = false;
  /** Secrets reported missing since they were last found: the timed reads do not log them again. */
  readonly #warned = new Set<string>();
  /** Reads begun, and the number of the newest one applied. */
  #reads = 0;
  #applied = 0;
  /** The last read failed: said once, until a read succeeds. */
  #failing = false;

  constructor(vault: Vault, logger: Logger, clock: Clock) {
    this.#vault = vault;
    this.#logger = logger;
    this.#clock = clock;
  }

  /** Reads `names` from the vault; resolves once they are known. */
  load(names: readonly string[]): Promise<void> {
    this.#names = names;
    this.#readAt = this.#clock.now();
    // The promise kept is the one returned: a read that ended clears it, so the next may start.
    const loading: Promise<void> = this.#read(names, ++this.#reads).finally(() => {
      if (this.#loading === loading) this.#loading = undefined;
      this.#armRefresh();
    });
    this.#loading = loading;
    return loading;
  }

  /** The value of a secret, or undefined when the vault has none (yet). */
  get(name: string): string | undefined {
    const value = this.#values.get(name);
    // At most one read per interval: deliveries to a trigger without its secret cannot hammer the vault.
    if (
      value === undefined &&
      this.#loading === undefined &&
      this.#clock.now() - this.#readAt >= REREAD_MILLISECONDS
    ) {
      void this.load(this.#names);
    }
    return value;
  }

  /** Stops the timed reads. */
  close(): void {
    this.#closed = true;
    this.#cancelRefresh?.();
  }

  #armRefresh(): void {
    this.#cancelRefresh?.();
    this.#cancelRefresh = undefined;
    const every = REFRESH_MILLISECONDS[this.#vault.backend];
    if (this.#closed || every === undefined || this.#names.length === 0) return;
    this.#cancelRefresh = this.#clock.setTimer(() => {
      this.#cancelRefresh = undefined;
      if (!this.#closed && this.#loading === undefined) void this.load(this.#names);
    }, every);
  }

  async #read(names: readonly string[], number: number): Promise<void> {
    const read = await readSecrets(this.#vault, names);
    // A read that began before one already applied (a timed read overtaken by the load of new
    // definitions) holds older values: applied, it would bring back a secret rotated since.
    if (number < this.#applied) return;
    this.#applied = number;
    const values = new Map<string, string>();
    const failed = new Set(read.failures.map((failure) => failure.name));
    for (const name of names) {
      const value = read.values.get(name);
      if (value !== undefined && value !== "") values.set(name, value);
      else if (failed.has(name)) {
        // A vault that cannot be read now keeps the values last read: a read error is no rotation.
        const known = this.#values.get(name);
        if (known !== undefined) values.set(name, known);
      } else if (this.#values.has(name) || !this.#warned.has(name)) {
        this.#warned.add(name);
        this.#logger.warn(
          { secret: name },
          "a webhook trigger's secret is not in the vault: its deliveries are refused",
        );
      }
    }
    this.#reportFailures(read.failures);
    for (const name of values.keys()) if (!failed.has(name)) this.#warned.delete(name);
    this.#values = values;
  }

  /**
   * Says once that the vault cannot be read, and once that it can again: the timed reads every few
   * seconds must not log a warning per secret per read while a damaged vault waits for its operator.
   */
  #reportFailures(failures: SecretsRead["failures"]): void {
    const first = failures[0];
    if (first === undefined) {
      if (this.#failing) this.#logger.info("the webhook triggers' secrets can be read from the vault again");
      this.#failing = false;
      return;
    }
    if (this.#failing) return;
    this.#failing = true;
    this.#logger.warn(
      {
        err: first.error,
        secrets: failures.slice(0, 10).map((failure) => failure.name),
        count: failures.length,
      },
      "could not read webhook triggers' secrets: the values read last stay in use until the vault can be read",
    );
  }
}
