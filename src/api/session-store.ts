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
 * the daemon ends every session (log in again with the URL it prints). One timer on the clock,
 * armed for the session that expires first, ends each at its expiry, so that what a session holds
 * open (an event stream, a long poll) ends with it.
 */
export class SessionStore {
  readonly #sessions = new Map<string, { expiresAt: number; identity: SessionIdentity }>();
  readonly #lifetime: number;
  readonly #capacity: number;
  readonly #clock: Clock;
  readonly #endListeners = new Set<() => void>();
  /** Cancels the expiry timer, armed while there are sessions. */
  #cancelExpiry: (() => void) | undefined;

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
    if (this.#cancelExpiry === undefined) this.#armExpiry();
    return id;
  }

  /** The session's token name and role while it exists and has not expired. */
  identify(id: string): SessionIdentity | undefined {
    const session = this.#sessions.get(digest(id));
    // An expired session is removed (and its listeners told) by the expiry timer.
    return session !== undefined && session.expiresAt > this.#clock.now() ? session.identity : undefined;
  }

  /** True while the session exists and has not expired. */
  isValid(id: string): boolean {
    return this.identify(id) !== undefined;
  }

  end(id: string): void {
    if (this.#sessions.delete(digest(id))) this.#ended();
  }

  /**
   * Calls `listener` after a session ended (logged out, expired, or the oldest dropped past the
   * capacity),
   * so that what it holds open can be ended; answers the function that stops it.
   */
  onEnd(listener: () => void): () => void {
    this.#endListeners.add(listener);
    return () => this.#endListeners.delete(listener);
  }

  /** Stops the expiry timer: the sessions stay, and expire as they are read. */
  close(): void {
    this.#cancelExpiry?.();
    this.#cancelExpiry = undefined;
  }

  #ended(): void {
    for (const listener of this.#endListeners) listener();
  }

  // The first expiry is looked for among all sessions, not taken from the oldest: a wall clock
  // stepped back makes a later login expire sooner.
  #armExpiry(): void {
    let first = Number.POSITIVE_INFINITY;
    for (const session of this.#sessions.values()) first = Math.min(first, session.expiresAt);
    if (first === Number.POSITIVE_INFINITY) return;
    this.#cancelExpiry = this.#clock.setTimer(() => this.#expire(), first - this.#clock.now());
  }

  #expire(): void {
    this.#cancelExpiry = undefined;
    const now = this.#clock.now();
    let expired = false;
    for (const [key, session] of this.#sessions) {
      if (session.expiresAt > now) continue;
      this.#sessions.delete(key);
      expired = true;
    }
    // Armed again first: a listener that creates a session finds the timer running.
    this.#armExpiry();
    if (expired) this.#ended();
  }
}

// Looking a session up by its hash keeps the raw ids out of memory dumps and makes the lookup's
// timing independent of how much of an id an attacker guessed right.
function digest(id: string): string {
  return createHash("sha256").update(id, "utf8").digest("base64url");
}
