import { execFileSync } from "node:child_process";
import {
  appendFileSync,
  cpSync,
  existsSync,
  lstatSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  symlinkSync,
  truncateSync,
  writeFileSync,
} from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { AgentEvent } from "../../src/events/agent-event.js";
import { agentEvents, listRuns, runEvents, startRun, waitForRunEnd } from "../daemon/api-shapes.js";
import { startDaemonProcess } from "../support/daemon-process.js";
import { type ScriptedLlmServer, startScriptedLlmServer, textReply } from "../support/scripted-llm-server.js";
import { createTempProject, type TempProject } from "../support/temp-project.js";
import { useTestKit } from "../support/test-kit.js";
import { waitFor } from "../support/wait-for.js";

/**
 * Each test starts the built daemon on a copy of one data folder (two finished runs and one still
 * running when the daemon was killed, plus another agent's run), damaged in one way a crash, a
 * power loss or a full disk leaves it, and checks that the daemon starts and serves, that no
 * reported event is lost, and that every new id is above every id reported (or shown) before.
 */
const kit = useTestKit();
let llm: ScriptedLlmServer;
let seed: TempProject;
/** Every event the first daemon reported, of agent `keep` and of agent `other`. */
let reported: AgentEvent[];
let reportedOther: AgentEvent[];
let highestReported: number;
let slowRun: string;
let newestFinished: string;

beforeAll(async () => {
  llm = await startScriptedLlmServer();
  llm.setDefaultReply((request) =>
    JSON.stringify(request.body?.messages ?? []).includes("slow-") ? { type: "hang" } : textReply("finished"),
  );
  seed = createTempProject({ llmUrl: llm.url });
  writeAgents(seed);
  const daemon = await startDaemonProcess({ configFile: seed.configFile });
  try {
    await waitForRunEnd(daemon, await startRun(daemon, "keep", "quick-1"));
    newestFinished = await startRun(daemon, "keep", "quick-2");
    await waitForRunEnd(daemon, newestFinished);
    await waitForRunEnd(daemon, await startRun(daemon, "other", "quick-other"));
    slowRun = await startRun(daemon, "keep", "slow-3");
    await waitFor(async () => {
      const runs = await listRuns(daemon, "?agent=keep");
      return runs.find((run) => run.id === slowRun)?.status === "running" ? true : undefined;
    }, "the slow run running");
    await llm.waitForChatRequests(3);
    reported = await agentEvents(daemon, "keep");
    reportedOther = await agentEvents(daemon, "other");
    highestReported = Math.max(...reported.map((event) => event.id));
  } finally {
    await daemon.kill();
  }
}, 120_000);

afterAll(async () => {
  seed?.remove();
  await llm?.close();
});

function writeAgents(project: TempProject): void {
  project.writeAgent("keep", {});
  project.writeAgent("other", {});
}

/** The lines of `events/keep.jsonl` in the damaged copy. */
function agentLog(data: string): string {
  return path.join(data, "events", "keep.jsonl");
}

function logLines(file: string): string[] {
  return readFileSync(file, "utf8").split("\n").slice(0, -1);
}

function writeLines(file: string, lines: string[]): void {
  writeFileSync(file, lines.map((line) => `${line}\n`).join(""));
}

/**
 * A copy of the seed's data folder damaged by `damage`, a daemon started on it, and the checks
 * every damaged state must pass. `shown`: the highest id the damage itself put in a log (a torn
 * or out-of-order line), which must not be given again either.
 */
async function restartAfter(damage: (data: string) => void, shown = 0): Promise<void> {
  const project = kit.project({ llmUrl: llm.url });
  writeAgents(project);
  rmSync(project.dataDirectory, { recursive: true, force: true });
  cpSync(seed.dataDirectory, project.dataDirectory, { recursive: true });
  damage(project.dataDirectory);
  const daemon = await kit.daemon(project.configFile);

  const health = await daemon.request("GET", "/health");
  expect(health.status).toBe(200);

  // The interrupted run ends as crashed: the agent still runs, and its log takes new lines.
  await waitFor(
    async () =>
      (await listRuns(daemon, "?agent=keep")).find((run) => run.id === slowRun)?.ended_at ? true : undefined,
    "the slow run ended as crashed",
  );
  const next = await startRun(daemon, "keep", "quick-after");
  expect(await waitForRunEnd(daemon, next)).toMatchObject({ status: "completed", result: "finished" });

  // No reported event is lost: each is served by its agent or by its run.
  const after = await agentEvents(daemon, "keep");
  const byRun = new Map<string, AgentEvent[]>();
  for (const event of reported) {
    if (after.some((served) => served.id === event.id)) {
      expect(after).toContainEqual(event);
      continue;
    }
    expect(event.run, `event ${event.id} has no run to be found in`).not.toBeNull();
    const run = event.run ?? "";
    if (!byRun.has(run)) byRun.set(run, await runEvents(daemon, run));
    expect(byRun.get(run)).toContainEqual(event);
  }

  // Every id given after the restart is above every id reported or shown before.
  const above = Math.max(highestReported, shown);
  const reportedIds = new Set(reported.map((event) => event.id));
  const fresh = after.filter((event) => !reportedIds.has(event.id));
  expect(fresh.length).toBeGreaterThan(0);
  for (const event of fresh) expect(event.id).toBeGreaterThan(above);
  const newRun = await runEvents(daemon, next);
  expect(newRun.length).toBeGreaterThan(0);
  for (const event of newRun) expect(event.id).toBeGreaterThan(above);
  const ids = after.map((event) => event.id);
  expect(new Set(ids).size).toBe(ids.length);

  // The crashed run's log holds its reported events and its end.
  const slow = await runEvents(daemon, slowRun);
  for (const event of reported.filter((one) => one.run === slowRun)) expect(slow).toContainEqual(event);
  expect(slow.at(-1)).toMatchObject({ type: "status", data: { status: "failed", reason: "crashed" } });

  // The other agent is untouched.
  expect((await agentEvents(daemon, "other")).slice(0, reportedOther.length)).toEqual(reportedOther);
}

describe("the daemon restarted on damaged event files", () => {
  it("starts after a torn last line, above the torn line's id", async () => {
    await restartAfter((data) => {
      appendFileSync(agentLog(data), `{"id":${highestReported + 1},"agent":"keep","run":null,"ty`);
    }, highestReported + 1);
  });

  it("starts after a garbled last line, its event restored from the run's log", async () => {
    await restartAfter((data) => {
      const lines = logLines(agentLog(data));
      lines[lines.length - 1] = "#~~ garbled: the end of this line was never written ~~";
      writeLines(agentLog(data), lines);
    });
  });

  it("starts after two lines glued together, reading both", async () => {
    await restartAfter((data) => {
      const lines = logLines(agentLog(data));
      const last = lines.pop() ?? "";
      lines[lines.length - 1] = `${lines.at(-1)}${last}`;
      writeLines(agentLog(data), lines);
    });
  });

  it("starts after a line with a bigger id than its neighbours, above that id", async () => {
    const bigger = () => highestReported + 50;
    await restartAfter((data) => {
      const lines = logLines(agentLog(data));
      const copy = { ...(JSON.parse(lines[0] ?? "{}") as AgentEvent), id: bigger() };
      lines.splice(lines.length - 2, 0, JSON.stringify(copy));
      writeLines(agentLog(data), lines);
    }, bigger());
  });

  it("starts when the run log holds lines the agent log lost", async () => {
    await restartAfter((data) => writeLines(agentLog(data), logLines(agentLog(data)).slice(0, -3)));
  });

  it("starts on an emptied agent log", async () => {
    await restartAfter((data) => truncateSync(agentLog(data), 0));
  });

  it("starts on a missing agent log, its run logs present", async () => {
    await restartAfter((data) => rmSync(agentLog(data)));
  });

  it("starts with a folder where the agent log should be, and moves it aside", async () => {
    let events = "";
    await restartAfter((data) => {
      events = path.dirname(agentLog(data));
      rmSync(agentLog(data));
      mkdirSync(agentLog(data));
      writeFileSync(path.join(agentLog(data), "stray"), "x");
    });
    const aside = readdirSync(events).filter((name) => name.startsWith("keep.jsonl.damaged-"));
    expect(aside).toHaveLength(1);
    expect(readFileSync(path.join(events, aside[0] ?? "", "stray"), "utf8")).toBe("x");
  });

  it("starts with a FIFO where the agent log should be", async () => {
    await restartAfter((data) => {
      rmSync(agentLog(data));
      execFileSync("mkfifo", [agentLog(data)]);
    });
  });

  // Followed before: the daemon read the linked file as its log and appended its events to it,
  // outside data_dir; a dangling link made the file it pointed to.
  it("starts with a symbolic link where the agent log should be, and writes nothing through it", async () => {
    const outside = path.join(kit.project().root, "outside.txt");
    const dangling = path.join(path.dirname(outside), "made-through-a-link.txt");
    writeFileSync(outside, "not an event log\n");
    let events = "";
    await restartAfter((data) => {
      events = path.dirname(agentLog(data));
      rmSync(agentLog(data));
      symlinkSync(outside, agentLog(data));
      symlinkSync(dangling, path.join(events, "other.jsonl.tmp-link"));
      rmSync(path.join(events, "other.jsonl"));
      renameSync(path.join(events, "other.jsonl.tmp-link"), path.join(events, "other.jsonl"));
    });
    expect(readFileSync(outside, "utf8")).toBe("not an event log\n");
    expect(existsSync(dangling)).toBe(false);
    const aside = readdirSync(events).filter((name) => /^(keep|other)\.jsonl\.damaged-/.test(name));
    expect(aside).toHaveLength(2);
    for (const name of aside) expect(lstatSync(path.join(events, name)).isSymbolicLink()).toBe(true);
  });

  // Stopped the start before: `error INTERNAL: EEXIST: file already exists, mkdir '…/events'`.
  it("starts with a file where the events folder should be, and moves it aside", async () => {
    let data = "";
    await restartAfter((copy) => {
      data = copy;
      rmSync(path.join(copy, "events"), { recursive: true });
      writeFileSync(path.join(copy, "events"), "not a folder\n");
    });
    const aside = readdirSync(data).filter((name) => name.startsWith("events.damaged-"));
    expect(aside).toHaveLength(1);
    expect(readFileSync(path.join(data, aside[0] ?? ""), "utf8")).toBe("not a folder\n");
  });

  it("starts after a power loss left NUL bytes over the last line", async () => {
    await restartAfter((data) => {
      const text = readFileSync(agentLog(data));
      const lastLineStart = text.lastIndexOf(0x0a, text.length - 2) + 1;
      text.fill(0, lastLineStart);
      writeFileSync(agentLog(data), Buffer.concat([text, Buffer.alloc(4096)]));
    });
  });

  it("starts on an agent log of only a partial line", async () => {
    await restartAfter((data) => {
      writeFileSync(agentLog(data), `{"id":${highestReported},"agent":"keep","run":"r`);
    });
  });

  it("starts after lines that are valid JSON but no event", async () => {
    await restartAfter((data) => appendFileSync(agentLog(data), '{"hello":"world"}\n[1,2,3]\n42\n"text"\n'));
  });

  it("starts on a log with CRLF line endings", async () => {
    await restartAfter((data) => {
      writeFileSync(agentLog(data), readFileSync(agentLog(data), "utf8").replaceAll("\n", "\r\n"));
    });
  });

  it("starts with a folder where a running run's log should be, rebuilt from the agent log", async () => {
    let runLog = "";
    await restartAfter((data) => {
      runLog = path.join(data, "runs", `${slowRun}.events.jsonl`);
      rmSync(runLog);
      mkdirSync(runLog);
    });
    const aside = readdirSync(path.dirname(runLog)).filter((name) =>
      name.startsWith(`${slowRun}.events.jsonl.damaged-`),
    );
    expect(aside).toHaveLength(1);
  });

  it("starts with a run log missing and another torn", async () => {
    await restartAfter((data) => {
      rmSync(path.join(data, "runs", `${slowRun}.events.jsonl`));
      appendFileSync(path.join(data, "runs", `${newestFinished}.events.jsonl`), '{"id":3,"agent":"ke');
    });
  });
});
