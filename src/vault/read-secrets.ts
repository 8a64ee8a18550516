import type { Vault } from "./vault.js";

/** What reading several secrets found: their values, and the names whose read failed with why. */
export interface SecretsRead {
  values: Map<string, string>;
  failures: Array<{ name: string; error: unknown }>;
}

/**
 * The values of `names` the vault has: in one read when the backend offers it (`getMany`: the file
 * vault, whose every `get` reads and decrypts the whole file, so 1,000 names one at a time cost
 * about a second of CPU), else one `get` per name. A failed batch read fails every name.
 */
export async function readSecrets(vault: Vault, names: readonly string[]): Promise<SecretsRead> {
  if (vault.getMany !== undefined) {
    try {
      return { values: await vault.getMany(names), failures: [] };
    } catch (error) {
      return { values: new Map(), failures: names.map((name) => ({ name, error })) };
    }
  }
  const values = new Map<string, string>();
  const failures: SecretsRead["failures"] = [];
  for (const name of names) {
    try {
      const value = await vault.get(name);
      if (value !== undefined) values.set(name, value);
    } catch (error) {
      failures.push({ name, error });
    }
  }
  return { values, failures };
}
