import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { ConfigSchema } from "../../src/config/config-schema.js";
import { AgentdError } from "../../src/errors/agentd-error.js";
import { SecretRedactor } from "../../src/secrets/secret-redactor.js";
import { createVault } from "../../src/vault/create-vault.js";
import { learnVaultSecrets } from "../../src/vault/learn-vault-secrets.js";
import type { Vault } from "../../src/vault/vault.js";

let dataDir: string;
beforeEach(() => {
  dataDir = mkdtempSync(path.join(tmpdir(), "agentd-learn-vault-"));
});
afterEach(() => rmSync(dataDir, { recursive: true, force: true }));

/** The daemon's file vault, counting the calls that each read (and decrypt) the whole vault file. */
function countedFileVault(): { vault: Vault; reads: () => number } {
  const inner = createVault(ConfigSchema.parse({ data_dir: dataDir, vault: { backend: "file" } }), {
    AGENTD_VAULT_KEY: "4e".repeat(32),
  });
  const getMany = inner.getMany;
  if (getMany === undefined) throw new Error("the file vault reads many secrets at once");
  let reads = 0;
  const vault: Vault = {
    backend: inner.backend,
    get: (name) => ((reads += 1), inner.get(name)),
    getMany: (wanted) => ((reads += 1), getMany.call(inner, wanted)),
    set: (name, value, signal) => inner.set(name, value, signal),
    remove: (name, signal) => inner.remove(name, signal),
    list: () => ((reads += 1), inner.list()),
  };
  return { vault, reads: () => reads };
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
