import { createHash, randomBytes } from "node:crypto";
import { type Clock, systemClock } from "../clock/clock.js";

export interface SessionStoreOptions {
  /** How long a browser login lasts (default 7 days). */
  lifetimeMilliseconds?: number;
  /** Sessions kept at most; the oldest goes first (default 1,000). */
  capacity?: number;
  /** When a session ends is reckoned on it (default: the system clock). */
  clock?: Clock;
}

/**
 * Browser sessions made by `GET /auth/login`: a random id per login, unrelated to the API token,
 * so the cookie never carries the token. Only a hash of each id is held, in memory: a restart of
 * the daemon ends every session (log in again with the URL it prints).
 */
export class SessionStore {
  readonly #expiresAt = new Map<string, number>();
  readonly #lifetime: number;
  readonly #capacity: number;
  readonly #clock: Clock;

  constructor(options: SessionStoreOptions = {}) {
    this.#lifetime = options.lifetimeMilliseconds ?? 7 * 24 * 60 * 60 * 1_000;
    this.#capacity = options.capacity ?? 1_000;
    this.#clock = options.clock ?? systemClock;
  }

  /** A new session id (43 characters of base64url, 256 bits). */
  create(): string {
    const id = randomBytes(32).toString("base64url");
    // Map order is insertion order: the first key is the oldest session.
    while (this.#expiresAt.size >= this.#capacity) {
      const oldest = this.#expiresAt.keys().next().value;
      if (oldest === undefined) break;
      this.#expiresAt.delete(oldest);
    }
    this.#expiresAt.set(digest(id), this.#clock.now() + this.#lifetime);
    return id;
  }

  /** True while the session exists and has not expired. */
  isValid(id: string): boolean {
    const key = digest(id);
    const expiresAt = this.#expiresAt.get(key);
    if (expiresAt === undefined) return false;
    if (expiresAt > this.#clock.now()) return true;
    this.#expiresAt.delete(key);
    return false;
  }

  end(id: string): void {
    this.#expiresAt.delete(digest(id));
  }
}

// Looking a session up by its hash keeps the raw ids out of memory dumps and makes the lookup's
// timing independent of how much of an id an attacker guessed right.
function digest(id: string): string {
  return createHash("sha256").update(id, "utf8").digest("base64url");
}
