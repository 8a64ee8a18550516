import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { ConfigSchema } from "../../src/config/config-schema.js";
import { SecretRedactor } from "../../src/secrets/secret-redactor.js";
import { protectVaultMaterial } from "../../src/secrets/protect-vault-material.js";
import { createVault } from "../../src/vault/create-vault.js";

let folder: string;
afterEach(() => rmSync(folder, { recursive: true, force: true }));

describe("the vault's own material", () => {
  it("is masked like a secret: the key file, AGENTD_VAULT_KEY and the vault file's ciphertext", async () => {
    folder = mkdtempSync(path.join(tmpdir(), "agentd-vault-material-"));
    const config = ConfigSchema.parse({ data_dir: folder });
    await createVault(config).set("token", "a-value-of-the-vault");
    const keyText = readFileSync(path.join(folder, "vault.key"), "utf8").trim();
    const vaultText = readFileSync(path.join(folder, "vault.json"), "utf8");
    const environmentKey = "0123456789abcdef".repeat(4);

    const redactor = new SecretRedactor();
    protectVaultMaterial(config, redactor, { AGENTD_VAULT_KEY: environmentKey });

    const masked = redactor.redact(`key=${keyText}\n${vaultText}\nenv=${environmentKey}`);
    expect(masked).not.toContain(keyText);
    expect(masked).not.toContain(environmentKey);
    expect(masked).toContain("[secret:vault_key]");
    const ciphertexts = Object.values(JSON.parse(vaultText) as Record<string, unknown>).filter(
      (value): value is string => typeof value === "string" && value.length >= 12,
    );
    expect(ciphertexts.length).toBeGreaterThan(0);
    for (const value of ciphertexts) expect(masked).not.toContain(value);
    expect(masked).toContain("[secret:vault_file]");
    // The key as hex too (a `xxd` of the key file's bytes).
    const hex = Buffer.from(keyText, "base64").toString("hex");
    expect(redactor.redact(hex)).toBe("[secret:vault_key]");
  });
});
