import { existsSync, mkdtempSync, readdirSync, rmSync, utimesSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { withFileLock } from "../../src/vault/file-lock.js";
import { fillUp, mountSmallTmpfs, unmount } from "../support/small-disk.js";

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

  it("leaves no lock behind when a full disk refuses its line, so the next writer goes in at once", async (context) => {
    directory = mkdtempSync(path.join(tmpdir(), "agentd-lock-"));
    if (!mountSmallTmpfs(directory, "64k")) {
      context.skip("cannot mount a tmpfs here (needs root): the test did not run");
      return;
    }
    try {
      const file = path.join(directory, "vault.json");
      const filler = path.join(directory, "filler");
      fillUp(filler);
      const refused = await withFileLock(file, async () => "inside").catch((error: unknown) => error);
      expect(refused).toMatchObject({ code: "ENOSPC" });
      expect(existsSync(`${file}.lock`)).toBe(false);

      rmSync(filler);
      // Within its 10 s wait a leftover lock (stale only after 30 s) would fail this with VAULT_UNAVAILABLE.
      expect(await withFileLock(file, async () => "inside")).toBe("inside");
    } finally {
      unmount(directory);
    }
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
