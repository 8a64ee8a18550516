import type { Vault } from "./vault.js";
import type { SecretRedactor } from "../secrets/secret-redactor.js";
import { readSecrets } from "./read-secrets.js";

/**
 * Teaches the redactor every value in the vault, so logs and events are masked even for a secret
 * no tool call has used yet. Call once at start-up and after `agentd secrets set` in-process. The
 * values are read in one go where the backend can (read-secrets.ts): one `get` per name read and
 * decrypted the whole file vault each time, a second of CPU for 1,000 secrets at each change.
 */
export async function learnVaultSecrets(vault: Vault, redactor: SecretRedactor): Promise<number> {
  const names = await vault.list();
  const read = await readSecrets(vault, names);
  const failure = read.failures[0];
  if (failure !== undefined) throw failure.error;
  for (const [name, value] of read.values) redactor.add(name, value);
  return names.length;
}
