import { timingSafeEqual } from "node:crypto";
import { type Clock, systemClock } from "../clock/clock.js";
import { AgentdError } from "../errors/agentd-error.js";
import type { Logger } from "../logging/logger.js";
import {
  DEFAULT_TOKEN_NAME,
  generateToken,
  type TokenRecord,
  type TokenSummary,
  summaryOf,
  tokenDigest,
  tokenDigestBytes,
} from "./api-token.js";
import type { Role } from "./role.js";
import type { TokenStore } from "./token-store.js";

/** A token that authenticated: its name and role, and which token of that name it is. */
export interface TokenIdentity {
  name: string;
  role: Role;
  /**
   * The token's stored digest (base64url SHA-256): what tells this token from a later one given the
   * same name after a revoke. Held in memory only, never answered nor logged.
   */
  digest: string;
}

export interface TokenRegistryOptions {
  /** The daemon's own token (`server.token` or `<data_dir>/api.token`): admin, named "default". */
  defaultToken: string;
  store: TokenStore;
  logger: Logger;
  /** How often the store is checked for tokens created or revoked elsewhere (default 1 s). */
  refreshMilliseconds?: number;
  clock?: Clock;
}

/**
 * The tokens a daemon accepts: its own (always admin) and the named ones of the store, held in
 * memory by the SHA-256 of each token and read again whenever the store's version changes (every
 * second), so a token created or revoked on any node of a cluster, or by another process, counts
 * within about a second, without a restart. A change made through this registry counts at once.
 */
export class TokenRegistry {
  readonly #options: TokenRegistryOptions;
  readonly #defaultDigest: Buffer;
  readonly #defaultIdentity: TokenIdentity;
  #byDigest = new Map<string, TokenRecord>();
  /** Each named token's digest as bytes, decoded once when the record is taken in, not per request. */
  #digestBytes = new WeakMap<TokenRecord, Buffer>();
  readonly #listeners = new Set<() => void>();
  #version: string | undefined;
  /** Counts local changes: a read of the store begun before one is not applied over it. */
  #generation = 0;
  #timer: NodeJS.Timeout | undefined;
  #refreshing: Promise<void> | undefined;

  private constructor(options: TokenRegistryOptions) {
    this.#options = options;
    this.#defaultDigest = tokenDigestBytes(options.defaultToken);
    this.#defaultIdentity = {
      name: DEFAULT_TOKEN_NAME,
      role: "admin",
      digest: this.#defaultDigest.toString("base64url"),
    };
  }

  /** Reads the store once, then follows it. */
  static async open(options: TokenRegistryOptions): Promise<TokenRegistry> {
    const registry = new TokenRegistry(options);
    await registry.refresh();
    registry.#timer = setInterval(() => void registry.refresh(), options.refreshMilliseconds ?? 1_000);
    registry.#timer.unref();
    return registry;
  }

  /** The token's name and role, or undefined when it is none this daemon accepts. */
  identify(token: string): TokenIdentity | undefined {
    // The SHA-256 is taken on every request: nothing derived from a token outlives its request.
    const digest = tokenDigestBytes(token);
    // Both sides are digests of the same length: the comparison time says nothing about the token.
    if (timingSafeEqual(digest, this.#defaultDigest)) return this.#defaultIdentity;
    const record = this.#byDigest.get(digest.toString("base64url"));
    if (record === undefined) return undefined;
    const stored = this.#storedDigest(record);
    return stored.length === digest.length && timingSafeEqual(stored, digest)
      ? { name: record.name, role: record.role, digest: record.hash }
      : undefined;
  }

  /**
   * Whether the very token `identify` answered this identity for is still valid: a browser session
   * or an open stream made with it lasts as long. A token revoked and then created again under the
   * same name is another token, so what the old one opened stays ended.
   */
  isActive(identity: TokenIdentity): boolean {
    if (identity.name === DEFAULT_TOKEN_NAME) return identity.digest === this.#defaultIdentity.digest;
    const record = this.#byDigest.get(identity.digest);
    return record !== undefined && record.name === identity.name && record.role === identity.role;
  }

  /**
   * Calls `listener` after each change of the tokens known (made here or read from the store), so
   * that what a revoked token holds open can be ended; answers the function that stops it.
   */
  onChange(listener: () => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  /** The named tokens, by name (never their values or hashes). */
  list(): TokenSummary[] {
    return [...this.#byDigest.values()]
      .map(summaryOf)
      .sort((left, right) => (left.name < right.name ? -1 : left.name > right.name ? 1 : 0));
  }

  /** Creates a token; the answer holds its value, which is never stored nor shown again. */
  async create(name: string, role: Role, createdBy: string): Promise<TokenSummary & { token: string }> {
    const token = generateToken();
    const record: TokenRecord = {
      name,
      role,
      hash: tokenDigest(token),
      created_at: new Date((this.#options.clock ?? systemClock).now()).toISOString(),
      created_by: createdBy,
    };
    await this.#options.store.create(record);
    this.#add(record);
    return { ...summaryOf(record), token };
  }

  /** Revokes a token at once on this daemon (within a second on the others); NOT_FOUND when none. */
  async revoke(name: string): Promise<void> {
    if (!(await this.#options.store.revoke(name))) {
      throw new AgentdError("NOT_FOUND", `no token named "${name}"`, {
        field: "name",
        hint:
          name === DEFAULT_TOKEN_NAME
            ? "the default token is server.token or <data_dir>/api.token: change it there and restart"
            : "agentd token list shows the tokens",
      });
    }
    this.#remove(name);
  }

  /** Reads the store again when its version changed (one read at a time). */
  refresh(): Promise<void> {
    this.#refreshing ??= this.#refreshOnce().finally(() => (this.#refreshing = undefined));
    return this.#refreshing;
  }

  close(): void {
    if (this.#timer) clearInterval(this.#timer);
  }

  async #refreshOnce(): Promise<void> {
    try {
      const generation = this.#generation;
      const version = await this.#options.store.version();
      if (version === this.#version) return;
      const records = await this.#options.store.list();
      if (generation !== this.#generation) return;
      this.#byDigest = new Map(records.map((record) => [record.hash, record]));
      this.#version = version;
      this.#changed();
    } catch (error) {
      // The tokens known stay valid: revoking needs the store to answer again.
      this.#options.logger.warn({ err: error }, "could not read the named tokens; keeping those known");
    }
  }

  #storedDigest(record: TokenRecord): Buffer {
    let bytes = this.#digestBytes.get(record);
    if (bytes === undefined) {
      bytes = Buffer.from(record.hash, "base64url");
      this.#digestBytes.set(record, bytes);
    }
    return bytes;
  }

  #add(record: TokenRecord): void {
    this.#generation++;
    this.#version = undefined;
    this.#byDigest.set(record.hash, record);
  }

  #remove(name: string): void {
    this.#generation++;
    this.#version = undefined;
    for (const [digest, record] of this.#byDigest) if (record.name === name) this.#byDigest.delete(digest);
    this.#changed();
  }

  #changed(): void {
    for (const listener of this.#listeners) {
      try {
        listener();
      } catch (error) {
        this.#options.logger.warn({ err: error }, "a listener of the token changes failed");
      }
    }
  }
}
