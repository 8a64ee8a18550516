import { execFileSync } from "node:child_process";
import {
  closeSync,
  mkdirSync,
  openSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeSync,
} from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import type { AgentEvent } from "../../src/events/agent-event.js";
import type { DaemonProcess } from "../support/daemon-process.js";
import { textReply } from "../support/scripted-llm-server.js";
import { useTestKit } from "../support/test-kit.js";
import { waitFor } from "../support/wait-for.js";
import { getRun, startRun, waitForRunEnd } from "./api-shapes.js";

const kit = useTestKit();

/** Mounts a 2 MB tmpfs on `folder`; false where this process may not mount (not root, no CAP_SYS_ADMIN). */
function mountSmallTmpfs(folder: string): boolean {
  try {
    execFileSync("mount", ["-t", "tmpfs", "-o", "size=2m,mode=0700", "tmpfs", folder], { stdio: "pipe" });
    return true;
  } catch {
    return false;
  }
}

/** Writes a file until the file system refuses more: every byte of it is taken. */
function fillUp(file: string): void {
  const descriptor = openSync(file, "w");
  try {
    for (const chunk of [65_536, 4_096, 512, 1]) {
      const data = Buffer.alloc(chunk, 120);
      for (;;) {
        try {
          writeSync(descriptor, data);
        } catch {
          break;
        }
      }
    }
  } finally {
    closeSync(descriptor);
  }
}

/** Every `.jsonl` file under `folder`, by path. */
function jsonlFiles(folder: string): string[] {
  return readdirSync(folder, { recursive: true, encoding: "utf8" })
    .filter((name) => name.endsWith(".jsonl"))
    .map((name) => path.join(folder, name));
}

/** The lines of a JSONL file that are not whole JSON lines (a torn write), and whether it ends with a newline. */
function tornLines(file: string): string[] {
  const text = readFileSync(file, "utf8");
  const torn = text
    .split("\n")
    .slice(0, -1)
    .filter((line) => {
      try {
        JSON.parse(line);
        return false;
      } catch {
        return true;
      }
    });
  if (text !== "" && !text.endsWith("\n")) torn.push(`(no newline at the end) ${text.slice(-80)}`);
  return torn;
}

/** Follows GET /events from `after` (undefined: the beginning) to its end; returns the events and the cursor. */
async function follow(
  daemon: DaemonProcess,
  after: string | undefined,
): Promise<{ events: AgentEvent[]; next: string | undefined }> {
  const events: AgentEvent[] = [];
  let cursor = after;
  for (;;) {
    const query = cursor === undefined ? "?limit=1000" : `?after=${encodeURIComponent(cursor)}&limit=1000`;
    const page = (await daemon.request("GET", `/events${query}`)).body as {
      events: AgentEvent[];
      next: string;
    };
    events.push(...page.events);
    cursor = page.next;
    if (page.events.length < 1000) return { events, next: cursor };
  }
}

interface Health {
  status: string;
  reasons: Array<{ code: string; error: string; file?: string; message: string }>;
}

describe("a daemon whose data_dir fills up", () => {
  it("refuses new runs with 507, holds what it cannot write, and goes on by itself once space returns", async (context) => {
    let letGo!: () => void;
    const answer = new Promise<void>((resolve) => (letGo = resolve));
    // A run's model answer waits until the test lets it go, and is large (its checkpoint and result need room).
    const { project } = await kit.scriptedProject(
      async (request) => {
        if (JSON.stringify(request.body?.messages ?? []).includes("wait-for-test")) await answer;
        return textReply(`done ${"x".repeat(40_000)}`, { chunkSize: 8_192 });
      },
      { config: { concurrency: 1, store: { probe_interval: "150ms" } } },
    );
    mkdirSync(project.dataDirectory, { recursive: true });
    if (!mountSmallTmpfs(project.dataDirectory)) {
      context.skip("cannot mount a tmpfs here (needs root): the disk-full test did not run");
      return;
    }
    kit.defer(() => execFileSync("umount", ["-l", project.dataDirectory]));
    project.writeAgent("writer", {});
    project.writeAgent("other", {});
    const daemon = await kit.daemon(project.configFile);

    const running = await startRun(daemon, "writer", "wait-for-test: first");
    await waitFor(async () => (await getRun(daemon, running)).status === "running", "the first run running");
    const queued = await startRun(daemon, "writer", "second");
    expect((await getRun(daemon, queued)).status).toBe("queued");
    const before = await follow(daemon, undefined);

    const filler = path.join(project.dataDirectory, "filler");
    fillUp(filler);
    letGo();
    // The answer's checkpoint, result and record meet the full disk.
    const degraded = await waitFor(async () => {
      const health = (await daemon.request("GET", "/health")).body as Health;
      return health.status === "degraded" ? health : undefined;
    }, "GET /health degraded");
    expect(degraded.reasons).toEqual([
      expect.objectContaining({
        code: "STORAGE_FULL",
        error: "ENOSPC",
        message: expect.stringContaining("ENOSPC"),
      }),
    ]);
    expect(JSON.stringify(degraded)).not.toContain(project.root);

    const refused = await daemon.request("POST", "/agents/other/runs", { task: "refused" });
    expect(refused.status).toBe(507);
    expect(refused.body).toMatchObject({ error: { code: "STORAGE_FULL" } });
    const metrics = await (await fetch(`${daemon.url}/metrics`, { headers: daemon.headers() })).text();
    expect(metrics).toMatch(/^agentd_storage_full 1$/m);
    expect(metrics).toMatch(/^agentd_storage_full_episodes_total 1$/m);

    // Nothing half-written, nothing reported that is not on disk: the first run has not ended, the second waits.
    for (const file of jsonlFiles(project.dataDirectory))
      expect({ file, torn: tornLines(file) }).toEqual({ file, torn: [] });
    expect((await getRun(daemon, running)).status).toBe("running");
    expect((await getRun(daemon, queued)).status).toBe("queued");
    const whileFull = await follow(daemon, before.next);
    for (const event of whileFull.events)
      expect(event.type === "status" && event.data.status === "completed").toBe(false);

    rmSync(filler);
    await waitFor(
      async () => ((await daemon.request("GET", "/health")).body as Health).status === "ok",
      "GET /health ok",
    );
    expect(await waitForRunEnd(daemon, running)).toMatchObject({ status: "completed" });
    expect(await waitForRunEnd(daemon, queued)).toMatchObject({ status: "completed" });
    const after = await startRun(daemon, "other", "after the episode");
    expect(await waitForRunEnd(daemon, after)).toMatchObject({ status: "completed" });

    // Every event reported before is still there, unchanged, and ids run on without a gap or a repeat.
    const everything = await follow(daemon, undefined);
    const reported = [...before.events, ...whileFull.events];
    expect(everything.events.slice(0, reported.length)).toEqual(reported);
    for (const agent of ["writer", "other"]) {
      const ids = everything.events.filter((event) => event.agent === agent).map((event) => event.id);
      expect(ids).toEqual(ids.map((_, index) => index + 1));
    }
    const firstRunLog = (await daemon.request("GET", `/runs/${running}/events?limit=10000`)).body as {
      events: AgentEvent[];
    };
    expect(firstRunLog.events.map((event) => event.type)).toEqual(
      expect.arrayContaining(["result", "status"]),
    );
    for (const file of jsonlFiles(project.dataDirectory))
      expect({ file, torn: tornLines(file) }).toEqual({ file, torn: [] });
    const agentLog = path.join(project.dataDirectory, "events", "writer.jsonl");
    const loggedIds = readFileSync(agentLog, "utf8")
      .trim()
      .split("\n")
      .map((line) => (JSON.parse(line) as AgentEvent).id);
    expect(loggedIds).toEqual(loggedIds.map((_, index) => index + 1));
    expect(statSync(agentLog).size).toBeGreaterThan(0);
    expect(daemon.stderr()).toContain("the store is full");
    expect(daemon.stderr()).toContain("the store can write again");
  });
});
