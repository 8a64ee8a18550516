import path from "node:path";
import type { Config } from "../config/config-schema.js";
import type { SecretRedactor } from "./secret-redactor.js";
import { readRegularFileSync } from "../util/read-regular-file.js";

/** Shorter strings of the vault file (the `kdf` name, a version) say nothing and are not masked. */
const MIN_VAULT_FIELD_LENGTH = 12;

/**
 * Teaches the redactor the vault's own material, masked like secrets wherever it shows up (a
 * command that reads the files, with the sandbox off): the key as AGENTD_VAULT_KEY gives it and as
 * the key file holds it (text, and hex and base64 of its bytes), and every long string of the vault
 * file (ciphertext, salt, iv, tag). Call it again after the vault file changed. Never throws.
 */
export function protectVaultMaterial(
  config: Config,
  redactor: SecretRedactor,
  environment: NodeJS.ProcessEnv = process.env,
): void {
  const environmentKey = environment["AGENTD_VAULT_KEY"];
  if (environmentKey !== undefined && environmentKey.trim() !== "") addKey(environmentKey.trim(), redactor);
  const keyFile = config.vault.key_file ?? path.join(config.data_dir, "vault.key");
  const keyText = readOrUndefined(keyFile)?.trim();
  if (keyText) addKey(keyText, redactor);
  const vaultText = readOrUndefined(config.vault.file ?? path.join(config.data_dir, "vault.json"));
  if (vaultText === undefined) return;
  try {
    const fields = JSON.parse(vaultText) as unknown;
    for (const value of Object.values(fields && typeof fields === "object" ? fields : {})) {
      if (typeof value === "string" && value.length >= MIN_VAULT_FIELD_LENGTH)
        redactor.add("vault_file", value);
    }
  } catch {
    // Not JSON: the vault reports that itself when it is opened.
  }
}

function addKey(text: string, redactor: SecretRedactor): void {
  redactor.add("vault_key", text);
  const bytes = /^[0-9a-fA-F]{64}$/.test(text) ? Buffer.from(text, "hex") : Buffer.from(text, "base64");
  if (bytes.length !== 32) return;
  redactor.add("vault_key", bytes.toString("hex"));
  redactor.add("vault_key", bytes.toString("base64"));
}

function readOrUndefined(file: string): string | undefined {
  try {
    // Never blocks: a FIFO where the vault or its key should be is reported by the vault, not waited on.
    return readRegularFileSync(file);
  } catch {
    return undefined;
  }
}
