import { spawn } from "node:child_process";
import { once } from "node:events";
import {
  mkdirSync,
  mkdtempSync,
  readdirSync,
  statSync,
  symlinkSync,
  truncateSync,
  writeFileSync,
} from "node:fs";
import { hostname, tmpdir } from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { DataDirectoryLock, lockFileOf } from "../../src/locks/data-directory-lock.js";
import { currentProcessIdentity } from "../../src/locks/process-identity.js";
import { fillUp, mountSmallTmpfs, unmount } from "../support/small-disk.js";

/** The built module, as a racing process loads it. */
const BUILT = path.resolve(import.meta.dirname, "../../dist/locks/data-directory-lock.js");

const held: DataDirectoryLock[] = [];
afterEach(() => {
  for (const lock of held.splice(0)) lock.release();
});

function folder(): string {
  return mkdtempSync(path.join(tmpdir(), "agentd-lock-"));
}

/** The pid of a process that has just exited. */
async function deadPid(): Promise<number> {
  const child = spawn(process.execPath, ["-e", ""]);
  await once(child, "exit");
  return child.pid ?? 0;
}

function writeLock(directory: string, fields: Record<string, unknown>): void {
  const identity = currentProcessIdentity();
  writeFileSync(
    lockFileOf(directory),
    JSON.stringify({ ...identity, command: "start", since: "2026-01-01T00:00:00.000Z", ...fields }),
  );
}

describe("DataDirectoryLock", () => {
  it("says what is in the lock's place and what to do when a folder or a link to nothing is there", () => {
    const withFolder = folder();
    mkdirSync(lockFileOf(withFolder));
    expect(() => DataDirectoryLock.acquire(withFolder, { command: "start" })).toThrow(
      expect.objectContaining({
        code: "STORE_CORRUPT",
        message: expect.stringMatching(/agentd\.lock is a folder, not a lock file/),
        hint: expect.stringMatching(/move it aside/),
      }),
    );
    const withLink = folder();
    symlinkSync(path.join(withLink, "gone"), lockFileOf(withLink));
    expect(() => DataDirectoryLock.acquire(withLink, { command: "start" })).toThrow(
      expect.objectContaining({
        code: "STORE_CORRUPT",
        message: expect.stringMatching(/agentd\.lock is a symbolic link to nothing, not a lock file/),
      }),
    );
  });

  it("refuses a second holder while the first lives, naming it, and frees the folder on release", () => {
    const directory = folder();
    const first = DataDirectoryLock.acquire(directory, { command: "start" });
    held.push(first);
    first.update({ url: "http://127.0.0.1:7070" });
    let refusal: unknown;
    try {
      DataDirectoryLock.acquire(directory, { command: "run", agent: "x" });
    } catch (error) {
      refusal = error;
    }
    expect(refusal).toMatchObject({
      code: "DATA_DIR_LOCKED",
      message: expect.stringContaining(`pid ${process.pid}`),
      details: { holder: { pid: process.pid, url: "http://127.0.0.1:7070", command: "start" } },
    });
    expect(DataDirectoryLock.holderOf(directory)).toMatchObject({ url: "http://127.0.0.1:7070" });
    first.release();
    expect(DataDirectoryLock.holderOf(directory)).toBeUndefined();
    held.push(DataDirectoryLock.acquire(directory, { command: "start" }));
  });

  it("takes over the lock of a dead process, of a pid now used by another process, and of a past boot", async () => {
    const directory = folder();
    writeLock(directory, { pid: await deadPid() });
    const afterDeath = DataDirectoryLock.acquire(directory, { command: "start" });
    afterDeath.release();

    // pid 1 is alive, but it is not the process that wrote this lock.
    writeLock(directory, { pid: 1, process_start: "1" });
    DataDirectoryLock.acquire(directory, { command: "start" }).release();
    writeLock(directory, { boot_id: "another-boot" });
    DataDirectoryLock.acquire(directory, { command: "start" }).release();

    // A holder on another host cannot be checked: it counts as alive.
    writeLock(directory, { hostname: `${hostname()}-elsewhere` });
    expect(() => DataDirectoryLock.acquire(directory, { command: "start" })).toThrow(/in use/);
  });

  it("lets exactly one of many processes racing for a stale lock take it", async () => {
    const directory = folder();
    writeLock(directory, { pid: await deadPid() });
    // The winner holds the lock until every racer has said how it ended: a racer that starts late on
    // a loaded machine must still find it held, not freed by a winner that already exited.
    const release = path.join(folder(), "release");
    const script = `
      const { existsSync } = await import("node:fs");
      const { DataDirectoryLock } = await import(${JSON.stringify(BUILT)});
      try {
        DataDirectoryLock.acquire(process.argv[1], { command: "start" });
        console.log("won");
        const deadline = Date.now() + 60_000;
        const timer = setInterval(() => {
          if (existsSync(process.argv[2]) || Date.now() > deadline) clearInterval(timer);
        }, 20);
      } catch (error) {
        console.log(error.code);
      }`;
    const racers = Array.from({ length: 8 }, () =>
      spawn(process.execPath, ["--input-type=module", "-e", script, directory, release]),
    );
    const outcomes = await Promise.all(
      racers.map(async (racer) => {
        let output = "";
        racer.stdout.setEncoding("utf8");
        for await (const chunk of racer.stdout) {
          output += String(chunk);
          if (output.includes("\n")) break;
        }
        return output.trim();
      }),
    );
    writeFileSync(release, "");
    await Promise.all(racers.map((racer) => (racer.exitCode === null ? once(racer, "exit") : undefined)));
    outcomes.sort();
    expect(outcomes.filter((outcome) => outcome === "won")).toHaveLength(1);
    expect(outcomes.filter((outcome) => outcome === "DATA_DIR_LOCKED")).toHaveLength(7);
    // The winner released the lock as it exited; no temp file or takeover guard is left behind.
    expect(readdirSync(directory)).toEqual([]);
  });

  it("leaves no empty lock behind on a file system without hard links that is full, and starts at once when there is room", (context) => {
    const directory = folder();
    if (!mountSmallTmpfs(directory, "1m")) {
      context.skip("cannot mount a tmpfs here (needs root): the full no-link lock test did not run");
      return;
    }
    try {
      // One page of room: the lock's content written beside it fits, the lock file itself does not.
      const filler = path.join(directory, "filler");
      fillUp(filler);
      truncateSync(filler, statSync(filler).size - 4_096);
      // A file system without hard links (vfat, some network shares): the link is refused.
      const withoutLinks = {
        link: () => {
          throw Object.assign(new Error("operation not permitted"), { code: "EPERM" });
        },
      };

      expect(() => DataDirectoryLock.acquire(directory, { command: "start" }, withoutLinks)).toThrow(
        expect.objectContaining({ code: "ENOSPC" }),
      );
      expect(readdirSync(directory)).toEqual(["filler"]);

      // Room again: the next start takes the lock at once, with no empty lock to wait out.
      truncateSync(filler, 0);
      const started = Date.now();
      const lock = DataDirectoryLock.acquire(directory, { command: "start" }, withoutLinks);
      held.push(lock);
      expect(Date.now() - started).toBeLessThan(1_000);
      expect(DataDirectoryLock.holderOf(directory)).toMatchObject({ pid: process.pid, command: "start" });
    } finally {
      for (const lock of held.splice(0)) lock.release();
      unmount(directory);
    }
  });
});
