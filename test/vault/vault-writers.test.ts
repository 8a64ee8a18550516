import { existsSync, mkdtempSync, rmSync, utimesSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { FileVault } from "../../src/vault/file-vault.js";

let folder: string;
beforeEach(() => {
  folder = mkdtempSync(path.join(tmpdir(), "agentd-vault-writers-"));
});
afterEach(() => rmSync(folder, { recursive: true, force: true }));

const KEY = { kind: "raw" as const, key: Buffer.alloc(32, 7) };

describe("file vault with several writers", () => {
  it("keeps every secret when separate vault instances (as separate processes would) write at once", async () => {
    const file = path.join(folder, "vault.json");
    const writers = Array.from({ length: 6 }, () => new FileVault({ file, key: KEY }));
    await Promise.all(writers.map((vault, index) => vault.set(`secret_${index}`, `value-number-${index}`)));
    const reader = new FileVault({ file, key: KEY });
    expect(await reader.list()).toEqual(writers.map((_vault, index) => `secret_${index}`));
  });

  it("takes over a lock left behind by a process that died mid-write", async () => {
    const file = path.join(folder, "vault.json");
    const lock = `${file}.lock`;
    writeFileSync(lock, "12345\n");
    const anHourAgo = new Date(Date.now() - 3_600_000);
    utimesSync(lock, anHourAgo, anHourAgo);
    const vault = new FileVault({ file, key: KEY });
    await vault.set("after_crash", "written-anyway");
    expect(await vault.get("after_crash")).toBe("written-anyway");
    expect(existsSync(lock)).toBe(false);
  });
});
