import { randomBytes, scryptSync } from "node:crypto";
import { closeSync, fsyncSync, linkSync, mkdirSync, openSync, rmSync, statSync, writeSync } from "node:fs";
import path from "node:path";
import { AgentdError } from "../errors/agentd-error.js";
import { readRegularFileSync } from "../util/read-regular-file.js";

/** Where the file vault's key comes from. */
export type VaultKeySource =
  /** 32 raw bytes: AGENTD_VAULT_KEY as 64 hex digits or base64 of 32 bytes, or the key file. */
  | { kind: "raw"; key: Buffer }
  /** Any other AGENTD_VAULT_KEY: a passphrase, stretched with scrypt and the vault file's salt. */
  | { kind: "passphrase"; passphrase: string };

const KEY_BYTES = 32;

/**
 * Reads AGENTD_VAULT_KEY: 64 hex digits or base64 of exactly 32 bytes are used as the key itself;
 * any other text is a passphrase stretched with scrypt (N=2^15, r=8, p=1) and a random salt kept in
 * the vault file. Without AGENTD_VAULT_KEY, the key file (created on first use, mode 0600).
 */
export function resolveVaultKey(environmentKey: string | undefined, keyFile: string): VaultKeySource {
  if (environmentKey !== undefined && environmentKey !== "") {
    const text = environmentKey.trim();
    if (/^[0-9a-fA-F]{64}$/.test(text)) return { kind: "raw", key: Buffer.from(text, "hex") };
    if (/^[A-Za-z0-9+/]{43}=?$/.test(text)) {
      const decoded = Buffer.from(text, "base64");
      if (decoded.length === KEY_BYTES) return { kind: "raw", key: decoded };
    }
    return { kind: "passphrase", passphrase: environmentKey };
  }
  return { kind: "raw", key: readOrCreateKeyFile(keyFile) };
}

/** The 32-byte key for a vault file, deriving it from a passphrase with the file's salt. */
export function deriveKey(source: VaultKeySource, salt: Buffer): Buffer {
  if (source.kind === "raw") return source.key;
  return scryptSync(source.passphrase, salt, KEY_BYTES, { N: 1 << 15, r: 8, p: 1, maxmem: 64 * 1024 * 1024 });
}

function readOrCreateKeyFile(keyFile: string): Buffer {
  try {
    return readKeyFile(keyFile);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw error;
  }
  mkdirSync(path.dirname(keyFile), { recursive: true, mode: 0o700 });
  // Written whole under a temporary name, then linked into place: a process racing this one sees
  // no key file or a complete one, never an empty file.
  const temporary = `${keyFile}.${process.pid}.${randomBytes(4).toString("hex")}.tmp`;
  const descriptor = openSync(temporary, "wx", 0o600);
  try {
    writeSync(descriptor, `${randomBytes(KEY_BYTES).toString("base64")}\n`);
    fsyncSync(descriptor);
  } catch (error) {
    // A full disk: no empty temp file is left behind at each refused `secrets set`.
    closeSync(descriptor);
    rmSync(temporary, { force: true });
    throw error;
  }
  closeSync(descriptor);
  try {
    linkSync(temporary, keyFile);
  } catch (error) {
    // Another process made it first: use theirs.
    if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
  } finally {
    rmSync(temporary, { force: true });
  }
  return readKeyFile(keyFile);
}

function readKeyFile(keyFile: string): Buffer {
  const stats = statSync(keyFile);
  // A folder or a FIFO was told to `chmod 600`, which changes nothing: say what is there instead.
  if (!stats.isFile()) {
    const kind = stats.isDirectory() ? "a folder" : stats.isFIFO() ? "a FIFO" : "no regular file";
    throw new AgentdError("VAULT_UNAVAILABLE", `the vault key file ${keyFile} is ${kind}, not a file`, {
      file: keyFile,
      hint: "move it aside, then restore the key file from a backup: without it the vault cannot be read (with no vault yet, a new key is made)",
    });
  }
  const mode = stats.mode;
  if (process.platform !== "win32" && (mode & 0o077) !== 0) {
    throw new AgentdError("VAULT_UNAVAILABLE", `the vault key file ${keyFile} is readable by other users`, {
      file: keyFile,
      hint: `run: chmod 600 ${keyFile}`,
    });
  }
  const key = Buffer.from(readRegularFileSync(keyFile).trim(), "base64");
  if (key.length !== KEY_BYTES) {
    throw new AgentdError("VAULT_CORRUPT", `the vault key file ${keyFile} does not hold a 32-byte key`, {
      file: keyFile,
      hint: "restore the key file from a backup; without it the vault cannot be read",
    });
  }
  return key;
}
