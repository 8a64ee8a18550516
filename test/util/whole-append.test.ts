import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import type { AgentEvent } from "../../src/events/agent-event.js";
import { FileEventLog } from "../../src/events/file-event-log.js";
import { OpenLogFiles } from "../../src/events/open-log-files.js";
import { createLogger } from "../../src/logging/logger.js";
import { GroupedAppend } from "../../src/util/grouped-append.js";

/** A 64 KiB tmpfs: a write larger than what is left is cut short by the kernel (a real ENOSPC). */
const directory = mkdtempSync(path.join(tmpdir(), "agentd-whole-append-"));
const mounted = mountSmallTmpfs(directory);

function mountSmallTmpfs(target: string): boolean {
  try {
    execFileSync("mount", ["-t", "tmpfs", "-o", "size=64k", "tmpfs", target], { stdio: "pipe" });
    return true;
  } catch (error) {
    console.warn(`skipping the full-disk appends: cannot mount a tmpfs (${String(error).split("\n")[0]})`);
    return false;
  }
}

/** What a test leaves open or written on the tmpfs, undone after it (so it can be unmounted). */
const kept: Array<() => void> = [];
afterEach(() => {
  for (const undo of kept.splice(0)) undo();
});

afterAll(() => {
  if (mounted) execFileSync("umount", [directory]);
  rmSync(directory, { recursive: true, force: true });
});

/** A line bigger than the file system: the write lands partly, then fails with ENOSPC. */
const hugeLine = `{"id":3,"text":"${"x".repeat(128 * 1024)}"}\n`;

describe.skipIf(!mounted)("appends on a full disk", () => {
  it("cuts a write the disk cut short back, and appends the next line right after the last whole one", () => {
    const file = path.join(directory, "agent.jsonl");
    const filler = path.join(directory, "filler");
    const files = new OpenLogFiles();
    kept.push(
      () => files.closeAll(),
      () => rmSync(file, { force: true }),
      () => rmSync(filler, { force: true }),
    );
    files.append(file, '{"id":1}\n');
    files.append(file, '{"id":2}\n');
    let thrown: unknown;
    try {
      files.append(file, hugeLine);
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toMatchObject({ code: "STORE_WRITE_FAILED", file, cause: { code: "ENOSPC" } });
    expect(readFileSync(file, "utf8")).toBe('{"id":1}\n{"id":2}\n');

    // Filling what is left, then freeing it: the next append lands whole, on a clean line.
    expect(() => writeFileSync(filler, Buffer.alloc(128 * 1024))).toThrow();
    expect(() => files.append(file, hugeLine)).toThrow();
    rmSync(filler);
    files.append(file, '{"id":5}\n');
    files.closeAll();
    expect(readFileSync(file, "utf8")).toBe('{"id":1}\n{"id":2}\n{"id":5}\n');
  });

  it("rejects a grouped write the disk cut short and leaves none of its lines", async () => {
    const file = path.join(directory, "index.jsonl");
    const index = new GroupedAppend(file);
    kept.push(
      () => index.close(),
      () => rmSync(file, { force: true }),
    );
    await index.append("first");
    const failed = await Promise.allSettled([index.append("second"), index.append(hugeLine.trimEnd())]);
    for (const append of failed) {
      expect(append).toMatchObject({
        status: "rejected",
        reason: { code: "STORE_WRITE_FAILED", cause: { code: "ENOSPC" } },
      });
    }
    expect(readFileSync(file, "utf8")).toBe("first\n");
    await index.append("third");
    index.close();
    expect(readFileSync(file, "utf8")).toBe("first\nthird\n");
  });
});

describe.skipIf(!mounted)("an event whose run log is on a full disk", () => {
  it("is taken back from its agent's log too: in both logs or in neither", async () => {
    const dataDirectory = mkdtempSync(path.join(tmpdir(), "agentd-whole-event-"));
    // The run logs live on a small tmpfs mounted at runs/, the agent's log on the ordinary disk
    // (a symbolic link in a log's place is refused, so the folder itself is the mount point).
    const runs = path.join(dataDirectory, "runs");
    mkdirSync(runs);
    execFileSync("mount", ["-t", "tmpfs", "-o", "size=64k", "tmpfs", runs], { stdio: "pipe" });
    const runLogOnTmpfs = path.join(runs, "r_1.events.jsonl");
    const log = new FileEventLog({ dataDirectory, logger: createLogger({ level: "silent", pretty: false }) });
    kept.push(
      () => log.close(),
      () => execFileSync("umount", [runs]),
      () => rmSync(dataDirectory, { recursive: true, force: true }),
    );
    await log.load(10);
    writeFileSync(runLogOnTmpfs, "");
    const event = (id: number, text: string): AgentEvent =>
      ({
        id,
        agent: "a",
        run: "r_1",
        type: "thought",
        time: new Date().toISOString(),
        data: { text },
      }) as AgentEvent;
    const small = event(1, "fits");
    log.append(small, JSON.stringify(small));
    const huge = event(2, "x".repeat(128 * 1024));
    expect(() => log.append(huge, JSON.stringify(huge))).toThrow(
      expect.objectContaining({
        code: "STORE_WRITE_FAILED",
        cause: expect.objectContaining({ code: "ENOSPC" }),
      }),
    );
    const agentLog = path.join(dataDirectory, "events", "a.jsonl");
    expect(readFileSync(agentLog, "utf8")).toBe(`${JSON.stringify(small)}\n`);
    expect(readFileSync(runLogOnTmpfs, "utf8")).toBe(`${JSON.stringify(small)}\n`);
    const next = event(3, "after");
    log.append(next, JSON.stringify(next));
    expect(readFileSync(agentLog, "utf8")).toBe(`${JSON.stringify(small)}\n${JSON.stringify(next)}\n`);
  });
});
