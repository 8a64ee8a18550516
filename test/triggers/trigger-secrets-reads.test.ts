import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { Writable } from "node:stream";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createLogger } from "../../src/logging/logger.js";
import { TriggerSecrets } from "../../src/triggers/trigger-secrets.js";
import type { Vault } from "../../src/vault/vault.js";
import { countedFileVault as countedVaultIn } from "../support/counted-file-vault.js";
import { ManualClock } from "../support/manual-clock.js";
import { waitFor } from "../support/wait-for.js";

const SECRETS = 50;
const names = Array.from({ length: SECRETS }, (_, index) => `hook_${index}`);

let dataDir: string;
beforeEach(() => {
  dataDir = mkdtempSync(path.join(tmpdir(), "agentd-trigger-secrets-"));
});
afterEach(() => rmSync(dataDir, { recursive: true, force: true }));

function countedFileVault(): { vault: Vault; reads: () => number } {
  return countedVaultIn(dataDir, "3d".repeat(32));
}

function collectingLogger(): { logger: ReturnType<typeof createLogger>; lines: () => string[] } {
  const lines: string[] = [];
  const destination = new Writable({
    write(chunk, _encoding, done) {
      lines.push(...String(chunk).trim().split("\n"));
      done();
    },
  });
  return { logger: createLogger({ level: "info", pretty: false, destination }), lines: () => lines };
}

describe("webhook secrets read again on the daemon's clock", () => {
  it("reads the file vault once per refresh, however many secrets the triggers name", async () => {
    const { vault, reads } = countedFileVault();
    for (const name of names) await vault.set(name, `value-of-${name}`);
    const clock = new ManualClock(Date.parse("2026-03-01T00:00:00Z"));
    const secrets = new TriggerSecrets(vault, collectingLogger().logger, clock);
    await secrets.load(names);
    expect(secrets.get("hook_7")).toBe("value-of-hook_7");
    // One file read each: 1,000 secrets one `get` at a time cost about a second of CPU every 5 s.
    expect(reads()).toBe(1);

    await vault.set("hook_7", "rotated");
    clock.advanceBy(5_000);
    await waitFor(() => secrets.get("hook_7") === "rotated", "the rotated secret read");
    expect(reads()).toBe(2);
    secrets.close();
  });

  it("keeps serving the values read last while the vault is damaged, says so once, and stops on close", async () => {
    const { vault, reads } = countedFileVault();
    for (const name of names) await vault.set(name, `value-of-${name}`);
    const clock = new ManualClock(Date.parse("2026-03-01T00:00:00Z"));
    const log = collectingLogger();
    const secrets = new TriggerSecrets(vault, log.logger, clock);
    await secrets.load(names);

    writeFileSync(path.join(dataDir, "vault.json"), "{ not a vault");
    for (let refresh = 1; refresh <= 4; refresh++) {
      clock.advanceBy(5_000);
      await waitFor(() => reads() === 1 + refresh && clock.pending === 1, `refresh ${refresh} done`);
    }
    expect(secrets.get("hook_3")).toBe("value-of-hook_3");
    const warnings = log.lines().filter((line) => line.includes("could not read webhook triggers' secrets"));
    // Once for the damage, not once per secret per refresh (50 × 4 lines).
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toContain(`"count":${SECRETS}`);

    rmSync(path.join(dataDir, "vault.json"));
    await vault.set("hook_3", "restored");
    clock.advanceBy(5_000);
    await waitFor(() => secrets.get("hook_3") === "restored", "the restored vault read");
    expect(log.lines().some((line) => line.includes("can be read from the vault again"))).toBe(true);

    secrets.close();
    const before = reads();
    expect(clock.pending).toBe(0);
    clock.advanceBy(60_000);
    expect(reads()).toBe(before);
  });
});

describe("webhook secrets read twice at once", () => {
  it("never lets an older read that ends last bring back a rotated secret", async () => {
    // A vault whose reads end when the test says: the first one (old values) ends after the second.
    const pending: Array<{ values: Map<string, string>; release: () => void; done: Promise<void> }> = [];
    let value = "leaked";
    const vault: Vault = {
      backend: "file",
      get: async () => undefined,
      getMany: (names) => {
        const values = new Map(names.map((name) => [name, value]));
        let release = () => {};
        const done = new Promise<void>((resolve) => (release = resolve));
        pending.push({ values, release, done });
        return done.then(() => values);
      },
      set: async () => undefined,
      remove: async () => false,
      list: async () => [],
    };
    const clock = new ManualClock(Date.parse("2026-03-01T00:00:00Z"));
    const secrets = new TriggerSecrets(vault, collectingLogger().logger, clock);
    const first = secrets.load(["build_hook"]);
    value = "rotated";
    const second = secrets.load(["build_hook"]);
    pending[1]?.release();
    await second;
    expect(secrets.get("build_hook")).toBe("rotated");
    pending[0]?.release();
    await first;
    expect(secrets.get("build_hook")).toBe("rotated");
    secrets.close();
  });
});
