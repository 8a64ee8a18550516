import type { Config } from "../config/config-schema.js";
import type { DefinitionSnapshot } from "../definitions/definition-snapshot.js";
import type { Logger } from "../logging/logger.js";
import { learnVaultSecrets } from "../secrets/learn-vault-secrets.js";
import { SecretRedactor } from "../secrets/secret-redactor.js";
import { createVault } from "../vault/create-vault.js";
import { resolveConfigSecrets } from "../vault/resolve-config-secrets.js";
import type { Vault } from "../vault/vault.js";

/** The vault, the config with `{{secret:name}}` resolved, and the redactor that knows the values. */
export interface DaemonSecrets {
  vault: Vault;
  config: Config;
  redactor: SecretRedactor;
}

/**
 * Opens the vault config `vault` names (unless one is given) and resolves the config's secret
 * templates, teaching the redactor each value. Throws SECRET_NOT_FOUND naming the config key.
 */
export async function prepareSecrets(
  config: Config,
  vault: Vault = createVault(config),
): Promise<DaemonSecrets> {
  const redactor = new SecretRedactor();
  return { vault, redactor, config: await resolveConfigSecrets(config, vault, redactor) };
}

/**
 * Teaches the redactor every vault value once some agent declares `secrets`, so logs and events
 * are masked before a tool first uses one. Done lazily: a daemon whose agents use no secret never
 * opens the vault (no key file is made, no keychain is asked). A vault that cannot be read is a
 * warning here; the tool call that needs a secret reports the error.
 */
export function createSecretLearner(
  secrets: DaemonSecrets,
  logger: Logger,
): (snapshot: DefinitionSnapshot) => void {
  let learned = false;
  return (snapshot) => {
    if (learned) return;
    const usesSecrets = snapshot.agents.some(
      (status) => (status.definition?.frontmatter.secrets.length ?? 0) > 0,
    );
    if (!usesSecrets) return;
    learned = true;
    learnVaultSecrets(secrets.vault, secrets.redactor).then(
      (count) =>
        logger.debug({ count, backend: secrets.vault.backend }, "vault secrets loaded for redaction"),
      (error: unknown) =>
        logger.warn({ err: error }, "could not read the vault; secrets are masked once used"),
    );
  };
}
