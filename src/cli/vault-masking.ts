import { existsSync } from "node:fs";
import path from "node:path";
import type { Config } from "../config/config-schema.js";
import type { DefinitionSnapshot } from "../definitions/definition-snapshot.js";
import { toAgentdError } from "../errors/agentd-error.js";
import { protectVaultMaterial } from "../secrets/protect-vault-material.js";
import { SecretRedactor } from "../secrets/secret-redactor.js";
import { createVault } from "../vault/create-vault.js";
import { learnVaultSecrets } from "../vault/learn-vault-secrets.js";

/** What an offline command masks its output with, and why it could not when it could not. */
export interface VaultMasking {
  /** A copy of a JSON-like value with every vault value (and the vault's own material) masked. */
  mask<Value>(value: Value): Value;
  /** Set when the vault could not be read: its values are then shown as the files quote them. */
  problem?: string;
}

/**
 * Reads the vault as the daemon does for its API, so that an offline command (`agentd validate`,
 * `agentd triggers`) prints an agent file's quote of a secret value masked, as GET /agents does:
 * the env vault always, the file vault when its file exists (no key file is made), the keychain
 * only when some agent declares `secrets` (asking it may prompt). Never throws.
 */
export async function vaultMasking(
  config: Config,
  snapshot: DefinitionSnapshot,
  environment: NodeJS.ProcessEnv = process.env,
): Promise<VaultMasking> {
  const redactor = new SecretRedactor();
  const mask = <Value>(value: Value): Value => redactor.redactValue(value);
  protectVaultMaterial(config, redactor, environment);
  if (!vaultWorthReading(config, snapshot)) return { mask };
  try {
    await learnVaultSecrets(createVault(config, environment), redactor);
    return { mask };
  } catch (error) {
    const reason = toAgentdError(error).message;
    return {
      mask,
      problem: `could not read the vault (${reason}): secret values quoted below are not masked`,
    };
  }
}

function vaultWorthReading(config: Config, snapshot: DefinitionSnapshot): boolean {
  switch (config.vault.backend) {
    case "env":
      return true;
    case "file":
      return existsSync(config.vault.file ?? path.join(config.data_dir, "vault.json"));
    case "keychain":
      return snapshot.agents.some((status) => (status.definition?.frontmatter.secrets.length ?? 0) > 0);
  }
}
