import { createCipheriv, createDecipheriv, randomBytes } from "node:crypto";
import { z } from "zod";
import { AgentdError } from "../errors/agentd-error.js";
import { assertSecretName } from "./secret-name.js";
import { replaceFile } from "../util/replace-file.js";
import { withFileLock } from "./file-lock.js";
import type { Vault } from "./vault.js";
import { type VaultKeySource, deriveKey } from "./vault-key.js";
import { readRegularFile } from "../util/read-regular-file.js";

const VaultFileSchema = z.strictObject({
  format: z.literal("agentd-vault"),
  version: z.literal(1),
  cipher: z.literal("aes-256-gcm"),
  kdf: z.enum(["raw", "scrypt"]),
  salt: z.base64(),
  iv: z.base64(),
  tag: z.base64(),
  data: z.base64(),
});
type VaultFile = z.infer<typeof VaultFileSchema>;

const PayloadSchema = z.strictObject({ secrets: z.record(z.string(), z.string()) });

export interface FileVaultOptions {
  /** The encrypted file (`vault.file`, default `<data_dir>/vault.json`). */
  file: string;
  key: VaultKeySource;
}

/**
 * Secrets in one AES-256-GCM encrypted JSON file. The whole map is one ciphertext, so a wrong key or
 * any changed byte is detected (VAULT_CORRUPT) rather than read as garbage. Writes replace the file
 * atomically (temp file, fsync, rename), mode 0600.
 */
export class FileVault implements Vault {
  readonly backend = "file";
  readonly #file: string;
  readonly #key: VaultKeySource;
  readonly #derived = new Map<string, Buffer>();
  #writes: Promise<unknown> = Promise.resolve();

  constructor(options: FileVaultOptions) {
    this.#file = options.file;
    this.#key = options.key;
  }

  async get(name: string): Promise<string | undefined> {
    const secrets = await this.#read();
    return Object.hasOwn(secrets, name) ? secrets[name] : undefined;
  }

  async getMany(names: readonly string[]): Promise<Map<string, string>> {
    const secrets = await this.#read();
    const values = new Map<string, string>();
    for (const name of names) {
      const value = Object.hasOwn(secrets, name) ? secrets[name] : undefined;
      if (value !== undefined) values.set(name, value);
    }
    return values;
  }

  async list(): Promise<string[]> {
    return Object.keys(await this.#read()).sort();
  }

  async set(name: string, value: string, signal?: AbortSignal): Promise<void> {
    assertSecretName(name);
    await this.#update((secrets) => {
      secrets[name] = value;
      return true;
    }, signal);
  }

  async remove(name: string, signal?: AbortSignal): Promise<boolean> {
    return this.#update((secrets) => {
      if (!Object.hasOwn(secrets, name)) return false;
      delete secrets[name];
      return true;
    }, signal);
  }

  /** Read-modify-write, one at a time within this process and, by a lock file, across processes. */
  #update(change: (secrets: Record<string, string>) => boolean, signal?: AbortSignal): Promise<boolean> {
    const next = this.#writes.then(() =>
      withFileLock(
        this.#file,
        async () => {
          const secrets = await this.#read();
          if (!change(secrets)) return false;
          await replaceFile(this.#file, `${JSON.stringify(this.#encrypt(secrets), null, 2)}\n`, {
            syncFolder: true,
          });
          return true;
        },
        signal,
      ),
    );
    this.#writes = next.catch(() => undefined);
    return next;
  }

  async #read(): Promise<Record<string, string>> {
    let text: string;
    try {
      text = await readRegularFile(this.#file);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === "ENOENT") return {};
      const code = (error as NodeJS.ErrnoException).code;
      throw new AgentdError(
        "VAULT_UNAVAILABLE",
        `cannot read the vault file ${this.#file}${code ? ` (${code})` : ""}`,
        {
          file: this.#file,
          cause: error,
          // A folder or a FIFO in its place is no matter of permissions.
          hint:
            code === "EISDIR" || error instanceof AgentdError
              ? "something else than a file is in its place: move it aside, then restore vault.json from a backup (or set the secrets again)"
              : "check the file's permissions",
        },
      );
    }
    return this.#decrypt(this.#parse(text));
  }

  #parse(text: string): VaultFile {
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch {
      json = undefined;
    }
    const parsed = VaultFileSchema.safeParse(json);
    if (!parsed.success) throw this.#corrupt("it is not an agentd vault file");
    return parsed.data;
  }

  #decrypt(file: VaultFile): Record<string, string> {
    const kdf = this.#key.kind === "raw" ? "raw" : "scrypt";
    if (file.kdf !== kdf) {
      const written = file.kdf === "raw" ? "a 32-byte key" : "a passphrase";
      throw this.#corrupt(`it was written with ${written}, and the key given now is not one`);
    }
    const key = this.#keyFor(Buffer.from(file.salt, "base64"));
    try {
      const decipher = createDecipheriv("aes-256-gcm", key, Buffer.from(file.iv, "base64"));
      decipher.setAAD(this.#header(file.kdf, file.salt));
      decipher.setAuthTag(Buffer.from(file.tag, "base64"));
      const plain = Buffer.concat([decipher.update(Buffer.from(file.data, "base64")), decipher.final()]);
      return PayloadSchema.parse(JSON.parse(plain.toString("utf8"))).secrets;
    } catch {
      throw this.#corrupt("it cannot be decrypted: the key is wrong or the file was changed");
    }
  }

  #encrypt(secrets: Record<string, string>): VaultFile {
    const kdf = this.#key.kind === "raw" ? "raw" : "scrypt";
    const salt = randomBytes(16).toString("base64");
    const iv = randomBytes(12);
    const cipher = createCipheriv("aes-256-gcm", this.#keyFor(Buffer.from(salt, "base64")), iv);
    cipher.setAAD(this.#header(kdf, salt));
    const data = Buffer.concat([cipher.update(JSON.stringify({ secrets }), "utf8"), cipher.final()]);
    return {
      format: "agentd-vault",
      version: 1,
      cipher: "aes-256-gcm",
      kdf,
      salt,
      iv: iv.toString("base64"),
      tag: cipher.getAuthTag().toString("base64"),
      data: data.toString("base64"),
    };
  }

  /** The header bound to the ciphertext, so a changed kdf or salt fails authentication. */
  #header(kdf: string, salt: string): Buffer {
    return Buffer.from(`agentd-vault/1/aes-256-gcm/${kdf}/${salt}`, "utf8");
  }

  #keyFor(salt: Buffer): Buffer {
    const id = salt.toString("base64");
    let key = this.#derived.get(id);
    if (!key) {
      key = deriveKey(this.#key, salt);
      this.#derived.set(id, key);
    }
    return key;
  }

  #corrupt(why: string): AgentdError {
    return new AgentdError("VAULT_CORRUPT", `the vault file ${this.#file} cannot be read: ${why}`, {
      file: this.#file,
      hint:
        "use the AGENTD_VAULT_KEY (or vault.key file) the vault was written with; if that key is lost, " +
        "move the vault file away and set the secrets again with `agentd secrets set`",
    });
  }
}
