import type { AsyncEntry } from "@napi-rs/keyring";
import { z } from "zod";
import { AgentdError } from "../errors/agentd-error.js";
import { assertSecretName } from "./secret-name.js";
import type { Vault } from "./vault.js";

/** The keychain entry that lists the names (keychains cannot be listed portably). */
const INDEX_ENTRY = "__agentd_index__";
const IndexSchema = z.array(z.string());

/**
 * Secrets in the OS keychain (macOS Keychain, Windows Credential Manager, Secret Service on Linux),
 * one entry per secret under the service `vault.service`, plus an index entry of names. Where no
 * keychain service runs, every call fails with VAULT_UNAVAILABLE saying what to use instead.
 */
export class KeychainVault implements Vault {
  readonly backend = "keychain";
  readonly #service: string;
  #ready: Promise<void> | undefined;

  constructor(service: string) {
    this.#service = service;
  }

  async get(name: string): Promise<string | undefined> {
    await this.#ensureAvailable();
    return (await this.#call(async () => (await this.#entry(name)).getPassword())) ?? undefined;
  }

  async list(): Promise<string[]> {
    await this.#ensureAvailable();
    return this.#readIndex();
  }

  async set(name: string, value: string): Promise<void> {
    assertSecretName(name);
    await this.#ensureAvailable();
    await this.#call(async () => (await this.#entry(name)).setPassword(value));
    const names = new Set(await this.#readIndex());
    names.add(name);
    await this.#writeIndex([...names]);
  }

  async remove(name: string): Promise<boolean> {
    await this.#ensureAvailable();
    const names = await this.#readIndex();
    const removed = await this.#call(async () => (await this.#entry(name)).deletePassword()).catch(
      () => false,
    );
    await this.#writeIndex(names.filter((known) => known !== name));
    return removed || names.includes(name);
  }

  /** The native keychain binding loads on first use, so no other vault pays for it at start-up. */
  async #entry(name: string): Promise<AsyncEntry> {
    const { AsyncEntry } = await import("@napi-rs/keyring");
    return new AsyncEntry(this.#service, name);
  }

  /** A keychain that cannot store reads as empty: write the index once to find out. */
  #ensureAvailable(): Promise<void> {
    this.#ready ??= (async () => {
      const index = await this.#call(async () => (await this.#entry(INDEX_ENTRY)).getPassword());
      if (index === null) await this.#writeIndex([]);
    })();
    this.#ready.catch(() => (this.#ready = undefined));
    return this.#ready;
  }

  async #readIndex(): Promise<string[]> {
    const text = await this.#call(async () => (await this.#entry(INDEX_ENTRY)).getPassword());
    if (text === null) return [];
    try {
      return IndexSchema.parse(JSON.parse(text)).sort();
    } catch {
      throw new AgentdError(
        "VAULT_CORRUPT",
        `the keychain index entry of service ${this.#service} is damaged`,
        {
          hint: `delete the keychain entry "${INDEX_ENTRY}" of service ${this.#service}; secrets stay, list them again by setting them`,
        },
      );
    }
  }

  async #writeIndex(names: string[]): Promise<void> {
    await this.#call(async () =>
      (await this.#entry(INDEX_ENTRY)).setPassword(JSON.stringify([...new Set(names)].sort())),
    );
  }

  async #call<Result>(operation: () => Promise<Result>): Promise<Result> {
    try {
      return await operation();
    } catch (error) {
      if (error instanceof AgentdError) throw error;
      const reason = error instanceof Error ? error.message : String(error);
      throw new AgentdError("VAULT_UNAVAILABLE", `the OS keychain is not available here: ${reason}`, {
        field: "vault.backend",
        cause: error,
        hint: "use vault.backend: file (an encrypted file, the default) or env (AGENTD_SECRET_<NAME> variables)",
      });
    }
  }
}
