import { ConfigSchema } from "../../src/config/config-schema.js";
import { createVault } from "../../src/vault/create-vault.js";
import type { Vault } from "../../src/vault/vault.js";

/**
 * The daemon's file vault in `dataDir`, counting the calls that each read (and decrypt) the whole
 * vault file: what a test of "one read, not one per secret" counts.
 */
export function countedFileVault(dataDir: string, key: string): { vault: Vault; reads: () => number } {
  const inner = createVault(ConfigSchema.parse({ data_dir: dataDir, vault: { backend: "file" } }), {
    AGENTD_VAULT_KEY: key,
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
