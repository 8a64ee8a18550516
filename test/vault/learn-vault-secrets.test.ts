import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { AgentdError } from "../../src/errors/agentd-error.js";
import { SecretRedactor } from "../../src/secrets/secret-redactor.js";
import { learnVaultSecrets } from "../../src/vault/learn-vault-secrets.js";
import type { Vault } from "../../src/vault/vault.js";
import { countedFileVault as countedVaultIn } from "../support/counted-file-vault.js";

let dataDir: string;
beforeEach(() => {
  dataDir = mkdtempSync(path.join(tmpdir(), "agentd-learn-vault-"));
});
afterEach(() => rmSync(dataDir, { recursive: true, force: true }));

function countedFileVault(): { vault: Vault; reads: () => number } {
  return countedVaultIn(dataDir, "4e".repeat(32));
}

describe("the vault's values taught to the redactor", () => {
  it("masks every secret, reading the file vault twice however many it holds", async () => {
    const { vault, reads } = countedFileVault();
    for (let index = 0; index < 40; index++) await vault.set(`token_${index}`, `value-${index}-abcdefgh`);
    const redactor = new SecretRedactor();
    expect(await learnVaultSecrets(vault, redactor)).toBe(40);
    expect(redactor.redact("sent value-7-abcdefgh and value-39-abcdefgh")).not.toContain("abcdefgh");
    // The list, then the values: not one read (and decryption of the whole file) per secret.
    expect(reads()).toBe(2);
  });

  it("fails as before when the vault cannot be read", async () => {
    const { vault } = countedFileVault();
    await vault.set("token", "value-abcdefgh");
    const names = await vault.list();
    writeFileSync(path.join(dataDir, "vault.json"), "{ damaged");
    const error = await learnVaultSecrets(vault, new SecretRedactor()).catch((caught: unknown) => caught);
    expect(AgentdError.is(error) && error.code).toBe("VAULT_CORRUPT");
    expect(names).toEqual(["token"]);
  });
});
