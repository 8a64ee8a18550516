import path from "node:path";
import type { Config } from "../config/config-schema.js";
import { EnvVault } from "./env-vault.js";
import { FileVault } from "./file-vault.js";
import { KeychainVault } from "./keychain-vault.js";
import type { Vault } from "./vault.js";
import { resolveVaultKey } from "./vault-key.js";

/** The vault that config `vault.backend` names. Nothing is read until the first call. */
export function createVault(config: Config, environment: NodeJS.ProcessEnv = process.env): Vault {
  const settings = config.vault;
  switch (settings.backend) {
    case "env":
      return new EnvVault(environment);
    case "keychain":
      return new KeychainVault(settings.service);
    case "file":
      return new LazyFileVault(
        settings.file ?? path.join(config.data_dir, "vault.json"),
        settings.key_file ?? path.join(config.data_dir, "vault.key"),
        environment["AGENTD_VAULT_KEY"],
      );
  }
}

/** Resolves the key (creating the key file) only when a secret is first used. */
class LazyFileVault implements Vault {
  readonly backend = "file";
  #vault: FileVault | undefined;

  constructor(
    readonly file: string,
    readonly keyFile: string,
    readonly environmentKey: string | undefined,
  ) {}

  async get(name: string): Promise<string | undefined> {
    return this.#open().get(name);
  }

  async getMany(names: readonly string[]): Promise<Map<string, string>> {
    return this.#open().getMany(names);
  }

  async set(name: string, value: string, signal?: AbortSignal): Promise<void> {
    return this.#open().set(name, value, signal);
  }

  async remove(name: string, signal?: AbortSignal): Promise<boolean> {
    return this.#open().remove(name, signal);
  }

  async list(): Promise<string[]> {
    return this.#open().list();
  }

  // Async, so that a key file that cannot be read or made (damaged, a full disk) rejects the call's
  // promise instead of throwing out of a caller that only handles its rejection.
  #open(): FileVault {
    this.#vault ??= new FileVault({
      file: this.file,
      key: resolveVaultKey(this.environmentKey, this.keyFile),
    });
    return this.#vault;
  }
}
