import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { execFileSync } from "node:child_process";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { ConfigSchema } from "../../src/config/config-schema.js";
import { AgentdError } from "../../src/errors/agentd-error.js";
import { createVault } from "../../src/vault/create-vault.js";
import { EnvVault } from "../../src/vault/env-vault.js";
import { KeychainVault } from "../../src/vault/keychain-vault.js";
import { resolveConfigSecrets } from "../../src/vault/resolve-config-secrets.js";
import { SecretRedactor } from "../../src/secrets/secret-redactor.js";
import { fillUp, mountSmallTmpfs, unmount } from "../support/small-disk.js";

let dataDir: string;
beforeEach(() => {
  dataDir = mkdtempSync(path.join(tmpdir(), "agentd-vault-"));
});
afterEach(() => rmSync(dataDir, { recursive: true, force: true }));

const configIn = (folder: string, vault: Record<string, unknown> = {}) =>
  ConfigSchema.parse({ data_dir: folder, vault });

async function expectCode(promise: Promise<unknown>, code: string): Promise<AgentdError> {
  const error = await promise.then(
    () => undefined,
    (caught: unknown) => caught,
  );
  expect(AgentdError.is(error)).toBe(true);
  expect((error as AgentdError).code).toBe(code);
  return error as AgentdError;
}

describe("file vault", () => {
  it("stores, lists and removes secrets, encrypted on disk, with a 0600 key file made on first use", async () => {
    const vault = createVault(configIn(dataDir), {});
    await vault.set("github_token", "ghp-very-secret-value");
    await vault.set("openai", "sk-another-secret");
    expect(await vault.get("github_token")).toBe("ghp-very-secret-value");
    expect(await vault.list()).toEqual(["github_token", "openai"]);
    expect(await vault.remove("openai")).toBe(true);
    expect(await vault.remove("openai")).toBe(false);
    expect(await vault.get("openai")).toBeUndefined();

    const onDisk = readFileSync(path.join(dataDir, "vault.json"), "utf8");
    expect(onDisk).not.toContain("ghp-very-secret-value");
    expect(onDisk).not.toContain("github_token");
    expect(statSync(path.join(dataDir, "vault.key")).mode & 0o777).toBe(0o600);
    expect(statSync(path.join(dataDir, "vault.json")).mode & 0o777).toBe(0o600);

    const reopened = createVault(configIn(dataDir), {});
    expect(await reopened.get("github_token")).toBe("ghp-very-secret-value");
  });

  it("stops a write waiting for another writer's lock when the caller's signal aborts, changing nothing", async () => {
    const vault = createVault(configIn(dataDir), {});
    await vault.set("kept", "kept-secret-value");
    const file = path.join(dataDir, "vault.json");
    writeFileSync(`${file}.lock`, `${process.pid}\n`);
    const caller = new AbortController();
    const writing = vault
      .set("blocked", "blocked-secret-value", caller.signal)
      .catch((error: unknown) => error);
    caller.abort(new Error("the command was interrupted"));
    expect(await writing).toEqual(new Error("the command was interrupted"));
    rmSync(`${file}.lock`);
    expect(await vault.list()).toEqual(["kept"]);
  });

  it("reports a wrong key as VAULT_CORRUPT with what to do", async () => {
    await createVault(configIn(dataDir), { AGENTD_VAULT_KEY: "a long passphrase" }).set("x", "value-1");
    const error = await expectCode(
      createVault(configIn(dataDir), { AGENTD_VAULT_KEY: "another passphrase" }).get("x"),
      "VAULT_CORRUPT",
    );
    expect(error.hint).toContain("AGENTD_VAULT_KEY");
    await expectCode(createVault(configIn(dataDir), {}).get("x"), "VAULT_CORRUPT");
  });

  it("reports a tampered file as VAULT_CORRUPT", async () => {
    const vault = createVault(configIn(dataDir), {});
    await vault.set("x", "value-1");
    const file = path.join(dataDir, "vault.json");
    const json = JSON.parse(readFileSync(file, "utf8")) as { data: string };
    const bytes = Buffer.from(json.data, "base64");
    bytes[0] = (bytes[0] ?? 0) ^ 1;
    writeFileSync(file, JSON.stringify({ ...json, data: bytes.toString("base64") }));
    await expectCode(createVault(configIn(dataDir), {}).get("x"), "VAULT_CORRUPT");
    writeFileSync(file, "not json");
    await expectCode(createVault(configIn(dataDir), {}).list(), "VAULT_CORRUPT");
  });

  it("says to move a folder in vault.json's place aside, not to check permissions, and writes nothing", async () => {
    const vault = createVault(configIn(dataDir), {});
    mkdirSync(path.join(dataDir, "vault.json"));
    const error = await expectCode(vault.set("x", "value-1"), "VAULT_UNAVAILABLE");
    expect(error.message).toMatch(/cannot read the vault file \S+vault\.json \(EISDIR\)$/);
    expect(error.hint).toMatch(/^something else than a file is in its place: move it aside/);
    expect(statSync(path.join(dataDir, "vault.json")).isDirectory()).toBe(true);
  });

  it("refuses a first secret on a full disk as ENOSPC, leaving no file behind, and takes it once there is room", async (context) => {
    if (!mountSmallTmpfs(dataDir, "64k")) {
      context.skip("cannot mount a tmpfs here (needs root): the test did not run");
      return;
    }
    try {
      const filler = path.join(dataDir, "filler");
      fillUp(filler);
      const vault = createVault(configIn(dataDir), {});
      expect(await vault.set("x", "value-1").catch((error: unknown) => error)).toMatchObject({
        code: "ENOSPC",
      });
      expect(readdirSync(dataDir)).toEqual(["filler"]);

      rmSync(filler);
      await vault.set("x", "value-1");
      expect(await createVault(configIn(dataDir), {}).get("x")).toBe("value-1");
    } finally {
      unmount(dataDir);
    }
  });

  it("takes AGENTD_VAULT_KEY as 64 hex digits or base64 of 32 bytes, and makes no key file then", async () => {
    const raw = Buffer.alloc(32, 7);
    for (const key of [raw.toString("hex"), raw.toString("base64")]) {
      const folder = mkdtempSync(path.join(dataDir, "k-"));
      await createVault(configIn(folder), { AGENTD_VAULT_KEY: key }).set("x", "value-2");
      expect(await createVault(configIn(folder), { AGENTD_VAULT_KEY: raw.toString("hex") }).get("x")).toBe(
        "value-2",
      );
      expect(() => statSync(path.join(folder, "vault.key"))).toThrow();
    }
  });

  it("refuses a key file other users can read", async () => {
    const keyFile = path.join(dataDir, "loose.key");
    writeFileSync(keyFile, Buffer.alloc(32, 1).toString("base64"), { mode: 0o644 });
    const vault = createVault(configIn(dataDir, { key_file: keyFile }), {});
    await expect(vault.get("x")).rejects.toThrow(/readable by other users/);
  });

  it.each([
    ["a folder", (file: string) => mkdirSync(file, { mode: 0o755 })],
    ["a FIFO", (file: string) => execFileSync("mkfifo", ["-m", "644", file])],
  ])("says the key file is %s, not that it is readable by others", async (kind, make) => {
    const keyFile = path.join(dataDir, "vault.key");
    make(keyFile);
    const vault = createVault(configIn(dataDir), {});
    const error = await expectCode(vault.list(), "VAULT_UNAVAILABLE");
    expect(error.message).toBe(`the vault key file ${keyFile} is ${kind}, not a file`);
    expect(error.hint).toMatch(/^move it aside/);
    expect(error.hint).not.toMatch(/chmod/);
  });

  it("rejects names an agent could not reference", async () => {
    await expectCode(createVault(configIn(dataDir), {}).set("bad name", "v"), "USAGE");
  });
});

describe("env vault", () => {
  it("reads AGENTD_SECRET_<NAME> and refuses to write", async () => {
    const vault = new EnvVault({ AGENTD_SECRET_GITHUB_TOKEN: "from-env", OTHER: "x" });
    expect(await vault.get("github_token")).toBe("from-env");
    expect(await vault.get("missing")).toBeUndefined();
    expect(await vault.list()).toEqual(["github_token"]);
    const error = await expectCode(vault.set("github_token"), "VAULT_UNAVAILABLE");
    expect(error.hint).toContain("AGENTD_SECRET_GITHUB_TOKEN");
    await expectCode(vault.remove("github_token"), "VAULT_UNAVAILABLE");
  });
});

describe("keychain vault", () => {
  it("works where a keychain runs, and otherwise says to use the file or env backend", async () => {
    const vault = new KeychainVault(`agentd-test-${process.pid}`);
    try {
      await vault.set("probe", "keychain-value");
      expect(await vault.get("probe")).toBe("keychain-value");
      expect(await vault.list()).toContain("probe");
      expect(await vault.remove("probe")).toBe(true);
    } catch (error) {
      expect(AgentdError.is(error, "VAULT_UNAVAILABLE")).toBe(true);
      expect((error as AgentdError).hint).toMatch(/backend: file.*env/);
    }
  });
});

describe("resolveConfigSecrets", () => {
  it("fills {{secret:name}} in config values and teaches the redactor", async () => {
    const vault = new EnvVault({ AGENTD_SECRET_OPENAI: "sk-config-secret" });
    const redactor = new SecretRedactor();
    const config = ConfigSchema.parse({ llm: { api_key: "{{secret:openai}}" } });
    const resolved = await resolveConfigSecrets(config, vault, redactor);
    expect(resolved.llm.api_key).toBe("sk-config-secret");
    expect(redactor.redact("key=sk-config-secret")).toBe("key=[secret:openai]");
  });

  it("names the config key of a missing secret", async () => {
    const config = ConfigSchema.parse({ server: { token: "{{secret:api_token}}" } });
    const error = await expectCode(resolveConfigSecrets(config, new EnvVault({})), "SECRET_NOT_FOUND");
    expect(error.field).toBe("server.token");
    expect(error.message).not.toContain("undefined");
  });
});
