import { existsSync, mkdtempSync, readdirSync, rmSync, utimesSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { withFileLock } from "../../src/vault/file-lock.js";

let directory: string;
afterEach(() => rmSync(directory, { recursive: true, force: true }));

describe("the vault file lock", () => {
  it("takes over a lock a dead writer left, once, even with several waiters", async () => {
    directory = mkdtempSync(path.join(tmpdir(), "agentd-lock-"));
    const file = path.join(directory, "vault.json");
    writeFileSync(`${file}.lock`, "99999\n");
    const longAgo = new Date(Date.now() - 120_000);
    utimesSync(`${file}.lock`, longAgo, longAgo);

    let inside = 0;
    let most = 0;
    const writer = () =>
      withFileLock(file, async () => {
        inside += 1;
        most = Math.max(most, inside);
        await new Promise((resolve) => setTimeout(resolve, 20));
        inside -= 1;
      });
    await Promise.all([writer(), writer(), writer(), writer()]);
    expect(most).toBe(1);
    expect(existsSync(`${file}.lock`)).toBe(false);
    expect(readdirSync(directory)).toEqual([]);
  });

  it("stops waiting for a held lock when the caller's signal aborts, with its reason", async () => {
    directory = mkdtempSync(path.join(tmpdir(), "agentd-lock-"));
    const file = path.join(directory, "vault.json");
    writeFileSync(`${file}.lock`, `${process.pid}\n`);
    const caller = new AbortController();
    let ran = false;
    const waiting = withFileLock(file, async () => void (ran = true), caller.signal).catch(
      (error: unknown) => error,
    );

    caller.abort(new Error("the user pressed Ctrl-C"));

    expect(await waiting).toEqual(new Error("the user pressed Ctrl-C"));
    expect(ran).toBe(false);
    expect(existsSync(`${file}.lock`)).toBe(true);
  });
});
