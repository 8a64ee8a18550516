import { execFileSync } from "node:child_process";
import {
  appendFileSync,
  cpSync,
  existsSync,
  lstatSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
  truncateSync,
  writeFileSync,
} from "node:fs";
import path from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import type { AgentEvent } from "../../src/events/agent-event.js";
import { agentEvents, listRuns, runEvents, startRun, waitForRunEnd } from "../daemon/api-shapes.js";
import { type DaemonProcess, startDaemonProcess } from "../support/daemon-process.js";
import { type ScriptedLlmServer, startScriptedLlmServer, textReply } from "../support/scripted-llm-server.js";
import type { TempProject } from "../support/temp-project.js";
import { useTestKit } from "../support/test-kit.js";
import { waitFor } from "../support/wait-for.js";

/**
 * One seed data folder: each agent has two finished runs and one still running when the daemon was
 * killed. Each damaged state a crash, a power loss or a full disk leaves is applied to its own
 * agent's files in one copy of that folder, so one daemon start serves them all (the state that
 * damages the whole events folder gets a copy of its own); each case then checks its agent: the
 * daemon serves it, no reported event is lost, and every new id is above every id reported (or
 * shown by the damage) before. Agent `other` is damaged by nothing and must stay as it was.
 */

/** What the seed daemon reported of one agent before it was killed. */
interface Seeded {
  agent: string;
  reported: AgentEvent[];
  highest: number;
  slowRun: string;
  newestFinished: string;
}

/**
 * One damaged state: what it does to its agent's files; the highest id it shows, if any; and the
 * warnings the start logs about the agent's log, in order (what was wrong, what was done).
 */
interface DamagedState {
  agent: string;
  damage: (data: string, seeded: Seeded) => number | void;
  said: RegExp[];
}

function agentLog(data: string, agent: string): string {
  return path.join(data, "events", `${agent}.jsonl`);
}

function logLines(file: string): string[] {
  return readFileSync(file, "utf8").split("\n").slice(0, -1);
}

function writeLines(file: string, lines: string[]): void {
  writeFileSync(file, lines.map((line) => `${line}\n`).join(""));
}

/** The start's warnings: a torn last line cut off, events restored from the run logs. */
const CUT = /^cut a torn last line off an event log/;
const RESTORED = /^restored events the agent's log lost from its run logs/;
const REBUILT = /^rebuilt a missing or empty run log from its agent's log/;

/** The warning of a thing moved aside: what it was, where it went, what to do next. */
function saidMovedAside(reason: string): RegExp {
  return new RegExp(
    `^moved \\S+ aside \\(${reason}\\): a new log starts in its place; look at \\S+\\.damaged-\\S+, then delete it$`,
  );
}

/** Where the symbolic links of the link states point: outside data_dir. */
let outside = "";
let dangling = "";

const STATES = {
  torn: {
    agent: "torn",
    damage: (data, { agent, highest }) => {
      appendFileSync(agentLog(data, agent), `{"id":${highest + 1},"agent":"${agent}","run":null,"ty`);
      return highest + 1;
    },
    said: [CUT],
  },
  garbled: {
    agent: "garbled",
    damage: (data, { agent }) => {
      const lines = logLines(agentLog(data, agent));
      lines[lines.length - 1] = "#~~ garbled: the end of this line was never written ~~";
      writeLines(agentLog(data, agent), lines);
    },
    said: [/skipped damaged lines of an event log/, RESTORED],
  },
  glued: {
    agent: "glued",
    damage: (data, { agent }) => {
      const lines = logLines(agentLog(data, agent));
      const last = lines.pop() ?? "";
      lines[lines.length - 1] = `${lines.at(-1)}${last}`;
      writeLines(agentLog(data, agent), lines);
    },
    said: [/read apart events glued on one line/],
  },
  bigger: {
    agent: "bigger",
    damage: (data, { agent, highest }) => {
      const lines = logLines(agentLog(data, agent));
      const copy = { ...(JSON.parse(lines[0] ?? "{}") as AgentEvent), id: highest + 50 };
      lines.splice(lines.length - 2, 0, JSON.stringify(copy));
      writeLines(agentLog(data, agent), lines);
      return highest + 50;
    },
    said: [/left lines out of order/],
  },
  lost: {
    agent: "lost",
    damage: (data, { agent }) =>
      writeLines(agentLog(data, agent), logLines(agentLog(data, agent)).slice(0, -3)),
    said: [RESTORED],
  },
  emptied: {
    agent: "emptied",
    damage: (data, { agent }) => truncateSync(agentLog(data, agent), 0),
    said: [RESTORED],
  },
  missing: {
    agent: "missing",
    damage: (data, { agent }) => rmSync(agentLog(data, agent)),
    said: [RESTORED],
  },
  folder: {
    agent: "folder",
    damage: (data, { agent }) => {
      rmSync(agentLog(data, agent));
      mkdirSync(agentLog(data, agent));
      writeFileSync(path.join(agentLog(data, agent), "stray"), "x");
    },
    said: [saidMovedAside("a folder"), RESTORED],
  },
  fifo: {
    agent: "fifo",
    damage: (data, { agent }) => {
      rmSync(agentLog(data, agent));
      execFileSync("mkfifo", [agentLog(data, agent)]);
    },
    said: [saidMovedAside("not a regular file"), RESTORED],
  },
  link: {
    agent: "link",
    damage: (data, { agent }) => {
      rmSync(agentLog(data, agent));
      symlinkSync(outside, agentLog(data, agent));
    },
    said: [saidMovedAside("a symbolic link"), RESTORED],
  },
  dangling: {
    agent: "dangling",
    damage: (data, { agent }) => {
      rmSync(agentLog(data, agent));
      symlinkSync(dangling, agentLog(data, agent));
    },
    said: [saidMovedAside("a symbolic link"), RESTORED],
  },
  nul: {
    agent: "nul",
    damage: (data, { agent }) => {
      const text = readFileSync(agentLog(data, agent));
      const lastLineStart = text.lastIndexOf(0x0a, text.length - 2) + 1;
      text.fill(0, lastLineStart);
      writeFileSync(agentLog(data, agent), Buffer.concat([text, Buffer.alloc(4096)]));
    },
    said: [CUT, RESTORED],
  },
  partial: {
    agent: "partial",
    damage: (data, { agent, highest }) =>
      void writeFileSync(agentLog(data, agent), `{"id":${highest},"agent":"${agent}","run":"r`),
    said: [CUT, RESTORED],
  },
  strangers: {
    agent: "strangers",
    damage: (data, { agent }) =>
      appendFileSync(agentLog(data, agent), '{"hello":"world"}\n[1,2,3]\n42\n"text"\n'),
    said: [/skipped damaged lines of an event log/],
  },
  crlf: {
    agent: "crlf",
    damage: (data, { agent }) =>
      writeFileSync(
        agentLog(data, agent),
        readFileSync(agentLog(data, agent), "utf8").replaceAll("\n", "\r\n"),
      ),
    said: [/lines that end with CRLF/],
  },
  "run-log-folder": {
    agent: "run-log-folder",
    damage: (data, { slowRun }) => {
      const runLog = path.join(data, "runs", `${slowRun}.events.jsonl`);
      rmSync(runLog);
      mkdirSync(runLog);
    },
    said: [],
  },
  "run-logs": {
    agent: "run-logs",
    damage: (data, { agent, slowRun, newestFinished }) => {
      rmSync(path.join(data, "runs", `${slowRun}.events.jsonl`));
      appendFileSync(path.join(data, "runs", `${newestFinished}.events.jsonl`), `{"id":3,"agent":"${agent}`);
    },
    said: [],
  },
} satisfies Record<string, DamagedState>;

/** Damages the whole events folder: on a copy of its own. */
const EVENTS_FOLDER: DamagedState = {
  agent: "events-folder",
  damage: (data) => {
    rmSync(path.join(data, "events"), { recursive: true });
    writeFileSync(path.join(data, "events"), "not a folder\n");
  },
  said: [RESTORED],
};

const AGENTS = [...Object.values(STATES).map((state) => state.agent), EVENTS_FOLDER.agent, "other"];

const kit = useTestKit("file");
let llm: ScriptedLlmServer;
const seeded = new Map<string, Seeded>();
/** The highest id each agent's damage showed. */
const shown = new Map<string, number>();
/** The copy with one damaged state per agent, and the one with the events folder damaged. */
let damaged: { data: string; daemon: DaemonProcess };
let eventsFolder: { data: string; daemon: DaemonProcess };

beforeAll(async () => {
  llm = await startScriptedLlmServer();
  kit.defer(() => llm.close());
  llm.setDefaultReply((request) =>
    JSON.stringify(request.body?.messages ?? []).includes("slow-") ? { type: "hang" } : textReply("finished"),
  );
  const seed = seedProject();
  const daemon = await startDaemonProcess({ configFile: seed.configFile });
  try {
    const ran = await Promise.all(
      AGENTS.map(async (agent) => {
        await waitForRunEnd(daemon, await startRun(daemon, agent, "quick-1"));
        const newestFinished = await startRun(daemon, agent, "quick-2");
        await waitForRunEnd(daemon, newestFinished);
        return { agent, newestFinished, slowRun: await startRun(daemon, agent, "slow-3") };
      }),
    );
    await llm.waitForChatRequests(AGENTS.length * 3, 60_000);
    await waitFor(async () => {
      const running = new Set((await listRuns(daemon, "?status=running&limit=1000")).map((run) => run.id));
      return ran.every(({ slowRun }) => running.has(slowRun)) ? true : undefined;
    }, "every slow run running");
    for (const run of ran) {
      const reported = await agentEvents(daemon, run.agent);
      seeded.set(run.agent, { ...run, reported, highest: Math.max(...reported.map((event) => event.id)) });
    }
  } finally {
    await daemon.kill();
  }
  outside = path.join(seed.root, "outside.txt");
  dangling = path.join(seed.root, "made-through-a-link.txt");
  writeFileSync(outside, "not an event log\n");
  const restart = async (states: DamagedState[]) => {
    const project = seedProject();
    rmSync(project.dataDirectory, { recursive: true, force: true });
    cpSync(seed.dataDirectory, project.dataDirectory, { recursive: true });
    for (const state of states) {
      const highest = state.damage(project.dataDirectory, seededOf(state.agent));
      if (typeof highest === "number") shown.set(state.agent, highest);
    }
    return { data: project.dataDirectory, daemon: await kit.daemon(project.configFile) };
  };
  [damaged, eventsFolder] = await Promise.all([restart(Object.values(STATES)), restart([EVENTS_FOLDER])]);
}, 180_000);

/** A project of every agent, its runs run at once (the seed's slow runs all hang together). */
function seedProject(): TempProject {
  const project = kit.project({ llmUrl: llm.url, config: { concurrency: AGENTS.length } });
  for (const agent of AGENTS) project.writeAgent(agent, {});
  return project;
}

function seededOf(agent: string): Seeded {
  const found = seeded.get(agent);
  if (!found) throw new Error(`agent ${agent} was not seeded`);
  return found;
}

/** The checks every damaged state must pass, on the agent it damaged. */
async function checkRecovered(daemon: DaemonProcess, agent: string): Promise<void> {
  const { reported, highest, slowRun } = seededOf(agent);
  expect((await daemon.request("GET", "/health")).status).toBe(200);

  // The interrupted run ends as crashed: the agent still runs, and its log takes new lines.
  await waitFor(
    async () =>
      (await listRuns(daemon, `?agent=${agent}`)).find((run) => run.id === slowRun)?.ended_at
        ? true
        : undefined,
    "the slow run ended as crashed",
  );
  const next = await startRun(daemon, agent, "quick-after");
  expect(await waitForRunEnd(daemon, next)).toMatchObject({ status: "completed", result: "finished" });

  const after = await expectServed(daemon, agent, reported);

  // Every id given after the restart is above every id reported or shown before.
  const above = Math.max(highest, shown.get(agent) ?? 0);
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
}

/** No reported event is lost: each is served by its agent or by its run. Returns the agent's events. */
async function expectServed(
  daemon: DaemonProcess,
  agent: string,
  reported: AgentEvent[],
): Promise<AgentEvent[]> {
  const after = await agentEvents(daemon, agent);
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
  return after;
}

/**
 * The start's warnings (and errors) about `file`, in order, match `said`: each repair is told,
 * naming the file, and nothing else is.
 */
function expectSaid(daemon: DaemonProcess, file: string, said: RegExp[]): void {
  const about = daemon
    .stderr()
    .split("\n")
    .filter((line) => line.startsWith("{"))
    .map((line) => JSON.parse(line) as { level: number; file?: string; msg: string })
    .filter(
      (line) => line.level >= 40 && line.file !== undefined && path.resolve(line.file) === path.resolve(file),
    )
    .map((line) => line.msg);
  expect({ file, said: about }).toEqual({
    file,
    said: said.map((pattern) => expect.stringMatching(pattern)),
  });
}

/** The names in `folder` that a damaged `name` was moved aside as. */
function movedAside(folder: string, name: string): string[] {
  return readdirSync(folder).filter((entry) => entry.startsWith(`${name}.damaged-`));
}

describe("the daemon restarted on damaged event files", () => {
  const check = async (state: DamagedState) => {
    await checkRecovered(damaged.daemon, state.agent);
    expectSaid(damaged.daemon, agentLog(damaged.data, state.agent), state.said);
  };

  it("starts after a torn last line, above the torn line's id", () => check(STATES.torn));

  it("starts after a garbled last line, its event restored from the run's log", () => check(STATES.garbled));

  it("starts after two lines glued together, reading both", () => check(STATES.glued));

  it("starts after a line with a bigger id than its neighbours, above that id", () => check(STATES.bigger));

  it("starts when the run log holds lines the agent log lost", () => check(STATES.lost));

  it("starts on an emptied agent log", () => check(STATES.emptied));

  it("starts on a missing agent log, its run logs present", () => check(STATES.missing));

  it("starts with a folder where the agent log should be, and moves it aside", async () => {
    await check(STATES.folder);
    const aside = movedAside(path.join(damaged.data, "events"), "folder.jsonl");
    expect(aside).toHaveLength(1);
    expect(readFileSync(path.join(damaged.data, "events", aside[0] ?? "", "stray"), "utf8")).toBe("x");
  });

  it("starts with a FIFO where the agent log should be", () => check(STATES.fifo));

  // Followed before: the daemon read the linked file as its log and appended its events to it,
  // outside data_dir; a dangling link made the file it pointed to.
  it("starts with a symbolic link where the agent log should be, and writes nothing through it", async () => {
    await check(STATES.link);
    await check(STATES.dangling);
    expect(readFileSync(outside, "utf8")).toBe("not an event log\n");
    expect(existsSync(dangling)).toBe(false);
    const events = path.join(damaged.data, "events");
    const aside = [...movedAside(events, "link.jsonl"), ...movedAside(events, "dangling.jsonl")];
    expect(aside).toHaveLength(2);
    for (const name of aside) expect(lstatSync(path.join(events, name)).isSymbolicLink()).toBe(true);
  });

  // Stopped the start before: `error INTERNAL: EEXIST: file already exists, mkdir '…/events'`.
  it("starts with a file where the events folder should be, and moves it aside", async () => {
    await checkRecovered(eventsFolder.daemon, EVENTS_FOLDER.agent);
    expectSaid(eventsFolder.daemon, path.join(eventsFolder.data, "events"), [
      /^moved \S+ aside \(not a folder\): an empty folder starts in its place \(the agents' events come back from their run logs\); look at \S+, then delete it$/,
    ]);
    expectSaid(eventsFolder.daemon, agentLog(eventsFolder.data, EVENTS_FOLDER.agent), EVENTS_FOLDER.said);
    // Every agent lost its log with the folder: what they reported is still served.
    await expectServed(eventsFolder.daemon, "other", seededOf("other").reported);
    const aside = movedAside(eventsFolder.data, "events");
    expect(aside).toHaveLength(1);
    expect(readFileSync(path.join(eventsFolder.data, aside[0] ?? ""), "utf8")).toBe("not a folder\n");
  });

  it("starts after a power loss left NUL bytes over the last line", () => check(STATES.nul));

  it("starts on an agent log of only a partial line", () => check(STATES.partial));

  it("starts after lines that are valid JSON but no event", () => check(STATES.strangers));

  it("starts on a log with CRLF line endings", () => check(STATES.crlf));

  it("starts with a folder where a running run's log should be, rebuilt from the agent log", async () => {
    await check(STATES["run-log-folder"]);
    const { slowRun } = seededOf(STATES["run-log-folder"].agent);
    expectSaid(damaged.daemon, path.join(damaged.data, "runs", `${slowRun}.events.jsonl`), [
      saidMovedAside("a folder"),
      REBUILT,
    ]);
    expect(movedAside(path.join(damaged.data, "runs"), `${slowRun}.events.jsonl`)).toHaveLength(1);
  });

  it("starts with a run log missing and another torn", async () => {
    await check(STATES["run-logs"]);
    const { slowRun, newestFinished } = seededOf(STATES["run-logs"].agent);
    expectSaid(damaged.daemon, path.join(damaged.data, "runs", `${slowRun}.events.jsonl`), [REBUILT]);
    // A finished run's log is not read at start (its torn line is skipped whenever it is read,
    // and nothing is appended to it again): nothing to say of it.
    expectSaid(damaged.daemon, path.join(damaged.data, "runs", `${newestFinished}.events.jsonl`), []);
  });

  it("leaves the undamaged agent's events as they were, and says nothing of its log", async () => {
    const { reported } = seededOf("other");
    expectSaid(damaged.daemon, agentLog(damaged.data, "other"), []);
    expect((await agentEvents(damaged.daemon, "other")).slice(0, reported.length)).toEqual(reported);
  });
});
