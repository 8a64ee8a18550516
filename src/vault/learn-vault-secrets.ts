import type { Vault } from "./vault.js";
import type { SecretRedactor } from "../secrets/secret-redactor.js";

/**
 * Teaches the redactor every value in the vault, so logs and events are masked even for a secret
 * no tool call has used yet. Call once at start-up and after `agentd secrets set` in-process.
 */
export async function learnVaultSecrets(vault: Vault, redactor: SecretRedactor): Promise<number> {
  const names = await vault.list();
  for (const name of names) {
    const value = await vault.get(name);
    if (value !== undefined) redactor.add(name, value);
  }
  return names.length;
}
