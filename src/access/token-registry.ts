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

/** A token that authenticated: its name and role. */
export interface TokenIdentity {
  name: string;
  role: Role;
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
  #byDigest = new Map<string, TokenRecord>();
  /** Each named token's digest as bytes, decoded once when the record is taken in, not per request. */
  #digestBytes = new WeakMap<TokenRecord, Buffer>();
  #names = new Set<string>();
  #version: string | undefined;
  /** Counts local changes: a read of the store begun before one is not applied over it. */
  #generation = 0;
  #timer: NodeJS.Timeout | undefined;
  #refreshing: Promise<void> | undefined;

  private constructor(options: TokenRegistryOptions) {
    this.#options = options;
    this.#defaultDigest = tokenDigestBytes(options.defaultToken);
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
    if (timingSafeEqual(digest, this.#defaultDigest)) return { name: DEFAULT_TOKEN_NAME, role: "admin" };
    const record = this.#byDigest.get(digest.toString("base64url"));
    if (record === undefined) return undefined;
    const stored = this.#storedDigest(record);
    return stored.length === digest.length && timingSafeEqual(stored, digest)
      ? { name: record.name, role: record.role }
      : undefined;
  }

  /** Whether a token of this name is still valid (a browser session made from it lasts as long). */
  isActive(name: string): boolean {
    return name === DEFAULT_TOKEN_NAME || this.#names.has(name);
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
      this.#names = new Set(records.map((record) => record.name));
      this.#version = version;
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
    this.#names.add(record.name);
  }

  #remove(name: string): void {
    this.#generation++;
    this.#version = undefined;
    for (const [digest, record] of this.#byDigest) if (record.name === name) this.#byDigest.delete(digest);
    this.#names.delete(name);
  }
}
