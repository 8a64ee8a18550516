import { createHash, randomBytes } from "node:crypto";
import type { TokenIdentity } from "../access/token-registry.js";
import { type Clock, systemClock } from "../clock/clock.js";

/**
 * Whose a browser session is: the token it logged in with (its name, its role, and which token of
 * that name it was, so that a later token of the same name does not revive the session).
 */
export type SessionIdentity = TokenIdentity;

const DEFAULT_IDENTITY: SessionIdentity = { name: "default", role: "admin", digest: "" };

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
  readonly #sessions = new Map<string, { expiresAt: number; identity: SessionIdentity }>();
  readonly #lifetime: number;
  readonly #capacity: number;
  readonly #clock: Clock;
  readonly #endListeners = new Set<() => void>();

  constructor(options: SessionStoreOptions = {}) {
    this.#lifetime = options.lifetimeMilliseconds ?? 7 * 24 * 60 * 60 * 1_000;
    this.#capacity = options.capacity ?? 1_000;
    this.#clock = options.clock ?? systemClock;
  }

  /** A new session id (43 characters of base64url, 256 bits) of the token that logged in. */
  create(identity: SessionIdentity = DEFAULT_IDENTITY): string {
    const id = randomBytes(32).toString("base64url");
    // Map order is insertion order: the first key is the oldest session.
    while (this.#sessions.size >= this.#capacity) {
      const oldest = this.#sessions.keys().next().value;
      if (oldest === undefined) break;
      this.#sessions.delete(oldest);
      this.#ended();
    }
    this.#sessions.set(digest(id), { expiresAt: this.#clock.now() + this.#lifetime, identity });
    return id;
  }

  /** The session's token name and role while it exists and has not expired. */
  identify(id: string): SessionIdentity | undefined {
    const key = digest(id);
    const session = this.#sessions.get(key);
    if (session === undefined) return undefined;
    if (session.expiresAt > this.#clock.now()) return session.identity;
    this.#sessions.delete(key);
    return undefined;
  }

  /** True while the session exists and has not expired. */
  isValid(id: string): boolean {
    return this.identify(id) !== undefined;
  }

  end(id: string): void {
    if (this.#sessions.delete(digest(id))) this.#ended();
  }

  /**
   * Calls `listener` after a session ended (logged out, or the oldest dropped past the capacity),
   * so that what it holds open can be ended; answers the function that stops it.
   */
  onEnd(listener: () => void): () => void {
    this.#endListeners.add(listener);
    return () => this.#endListeners.delete(listener);
  }

  #ended(): void {
    for (const listener of this.#endListeners) listener();
  }
}

// Looking a session up by its hash keeps the raw ids out of memory dumps and makes the lookup's
// timing independent of how much of an id an attacker guessed right.
function digest(id: string): string {
  return createHash("sha256").update(id, "utf8").digest("base64url");
}
