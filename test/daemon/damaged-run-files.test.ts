import {
  cpSync,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
  truncateSync,
  writeFileSync,
} from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type DaemonProcess, startDaemonProcess } from "../support/daemon-process.js";
import { type ScriptedLlmServer, startScriptedLlmServer, textReply } from "../support/scripted-llm-server.js";
import { createTempProject, type TempProject } from "../support/temp-project.js";
import { useTestKit } from "../support/test-kit.js";
import { waitFor } from "../support/wait-for.js";
import { getRun, listRuns, startRun, waitForRunEnd } from "./api-shapes.js";

/**
 * The run files of data_dir damaged at a restart (issue 26 item 3: "an emptied or missing index
 * (rebuilt from the records) … the daemon starts in every one of the damaged states or says exactly
 * which file to move aside"). Each test starts the built daemon on a copy of one data folder (a
 * finished run and one running when the daemon was killed) damaged in one way.
 *
 * Whatever sits where a file or folder of runs/ should be (a folder, a file, a symbolic link, an
 * empty or garbled record) is moved aside, never followed nor deleted, with one log line; the index
 * and the journal are rebuilt from the records, a record from its run's events, runs/ from the
 * agent logs.
 */
const kit = useTestKit();
let llm: ScriptedLlmServer;
let seed: TempProject;
let finished: string;
let interrupted: string;

beforeAll(async () => {
  llm = await startScriptedLlmServer();
  llm.setDefaultReply((request) =>
    JSON.stringify(request.body?.messages ?? []).includes("slow") ? { type: "hang" } : textReply("finished"),
  );
  seed = createTempProject({ llmUrl: llm.url });
  seed.writeAgent("keep", {});
  const daemon = await startDaemonProcess({ configFile: seed.configFile });
  try {
    finished = await startRun(daemon, "keep", "quick");
    await waitForRunEnd(daemon, finished);
    interrupted = await startRun(daemon, "keep", "slow");
    await waitFor(async () => (await getRun(daemon, interrupted)).status === "running", "the slow run");
    // The launch's record file follows its journal line off the event loop: the damaged states
    // below start from a data folder that holds both.
    const record = path.join(seed.dataDirectory, "runs", `${interrupted}.json`);
    await waitFor(
      () => existsSync(record) && readFileSync(record, "utf8").includes('"running"'),
      "the slow run's record file",
    );
  } finally {
    await daemon.kill();
  }
}, 60_000);

afterAll(async () => {
  seed?.remove();
  await llm?.close();
});

/** The run index's first segment file (runs/index/<n>.jsonl). */
function firstSegment(runs: string): string {
  const [segment] = readdirSync(path.join(runs, "index")).sort();
  if (segment === undefined) throw new Error("the seed's run index has no segment");
  return segment;
}

/** The log lines of a daemon's stderr that say a file was moved aside. */
function movedAsideLines(daemon: DaemonProcess): { file: string; moved_to: string; msg: string }[] {
  return daemon
    .stderr()
    .split("\n")
    .filter((line) => line.includes('"moved_to"'))
    .map((line) => JSON.parse(line) as { file: string; moved_to: string; msg: string });
}

/** The messages of a daemon's warnings and errors, but those of runs ending (a crashed run's end). */
function repairsSaid(daemon: DaemonProcess): string[] {
  return (
    daemon
      .stderr()
      .split("\n")
      .filter((line) => line.startsWith("{"))
      .map((line) => JSON.parse(line) as { level: number; msg: string; code?: string })
      // Root's standing warning (the process limit does not hold for it) is not a repair.
      .filter((line) => line.code !== "SANDBOX_LIMITS_ROOT")
      .filter(
        (line) => line.level >= 40 && line.msg !== "run ended" && !line.msg.startsWith("run interrupted"),
      )
      .map((line) => line.msg)
  );
}

/** The warning of a rebuilt index, with why it was rebuilt. */
function rebuiltIndex(reason: string): RegExp {
  const escaped = reason.replaceAll(/[.()]/g, "\\$&");
  return new RegExp(
    `^rebuilt the run index and the open runs from the run records \\(${escaped}\\): every run is listed again$`,
  );
}

/**
 * Starts a daemon on a damaged copy of the seed and checks what every damaged state must keep:
 * every run served (the interrupted one ended `crashed`, never run again), a new run completes.
 * `aside`: the path (under data_dir/runs) that must have been moved aside, once, with one log line.
 * `said`: what the start's warnings say was repaired (the move aside's line apart), in order.
 */
async function restartAfter(
  damage: (runs: string) => void,
  aside: string | undefined,
  said: RegExp[],
): Promise<DaemonProcess> {
  const project = kit.project({ llmUrl: llm.url });
  project.writeAgent("keep", {});
  rmSync(project.dataDirectory, { recursive: true, force: true });
  cpSync(seed.dataDirectory, project.dataDirectory, { recursive: true });
  damage(path.join(project.dataDirectory, "runs"));
  const daemon = await kit.daemon(project.configFile);
  expect(await waitForRunEnd(daemon, interrupted, 10_000)).toMatchObject({
    status: "failed",
    reason: "crashed",
  });
  const listed = (await listRuns(daemon)).map((run) => run.id);
  expect(listed).toEqual(expect.arrayContaining([finished, interrupted]));
  const next = await startRun(daemon, "keep", "quick again");
  expect(await waitForRunEnd(daemon, next)).toMatchObject({ status: "completed" });
  if (aside !== undefined) {
    const file = path.join(project.dataDirectory, "runs", aside);
    const moved = movedAsideLines(daemon).filter((line) => line.file === path.resolve(file));
    expect(moved).toHaveLength(1);
    expect(moved[0]?.msg).toMatch(/^moved \S+ aside \(.+\): .+; look at \S+, then delete it$/);
    expect(existsSync(moved[0]?.moved_to ?? "")).toBe(true);
  }
  const repairs = repairsSaid(daemon).filter((message) => !message.startsWith("moved "));
  expect(repairs).toEqual(said.map((pattern) => expect.stringMatching(pattern)));
  return daemon;
}

describe("the daemon restarted on damaged run files", () => {
  it("lists every run again after the run index was emptied", async () => {
    await restartAfter((runs) => truncateSync(path.join(runs, "index", firstSegment(runs)), 0), undefined, [
      rebuiltIndex("run index segment 00000001.jsonl is missing or was cut short"),
    ]);
  });

  it("lists every run again after a power cut left the index's tail zero-filled", async () => {
    // ext4 after a power cut: the file kept its size, the blocks of its last writes read as NULs.
    await restartAfter(
      (runs) => {
        const file = path.join(runs, "index", firstSegment(runs));
        const text = readFileSync(file);
        text.fill(0, Math.floor(text.length / 2));
        writeFileSync(file, text);
      },
      undefined,
      [
        /^ended a torn last line of the run index$/,
        rebuiltIndex("run index segment 00000001.jsonl holds 1 unreadable line"),
      ],
    );
  });

  it("lists every run again after the open-runs journal was removed", async () => {
    await restartAfter((runs) => rmSync(path.join(runs, "open"), { recursive: true }), undefined, [
      rebuiltIndex("the open-runs journal is missing or empty"),
    ]);
  });

  it("starts with a folder where an index segment should be", async () => {
    await restartAfter(
      (runs) => {
        const segment = path.join(runs, "index", firstSegment(runs));
        rmSync(segment);
        mkdirSync(segment);
      },
      "index/00000001.jsonl",
      [rebuiltIndex("a damaged part of the run index was moved aside")],
    );
  });

  it("starts with a file where the run index folder should be", async () => {
    await restartAfter(
      (runs) => {
        rmSync(path.join(runs, "index"), { recursive: true });
        writeFileSync(path.join(runs, "index"), "not a folder\n");
      },
      "index",
      [rebuiltIndex("a damaged part of the run index was moved aside")],
    );
  });

  it("starts with a folder where an open-runs journal file should be", async () => {
    await restartAfter(
      (runs) => {
        const [journal] = readdirSync(path.join(runs, "open")).sort();
        if (journal === undefined) throw new Error("the seed has no open-runs journal");
        rmSync(path.join(runs, "open", journal));
        mkdirSync(path.join(runs, "open", journal));
        writeFileSync(path.join(runs, "open", journal, "keep-me"), "user data\n");
      },
      "open/00000001.jsonl",
      [rebuiltIndex("a damaged part of the open-runs journal was moved aside")],
    );
  });

  it("starts with a folder where a finished run's record should be", async () => {
    await restartAfter(
      (runs) => {
        rmSync(path.join(runs, `${finished}.json`), { force: true });
        mkdirSync(path.join(runs, `${finished}.json`));
      },
      `${finished}.json`,
      [],
    );
  });

  it("never follows a symbolic link where a finished run's record should be", async () => {
    const outside = kit.project({ llmUrl: llm.url });
    const target = path.join(outside.root, "elsewhere.json");
    writeFileSync(target, "not agentd's\n");
    await restartAfter(
      (runs) => {
        rmSync(path.join(runs, `${finished}.json`), { force: true });
        symlinkSync(target, path.join(runs, `${finished}.json`));
      },
      `${finished}.json`,
      [],
    );
    expect(readFileSync(target, "utf8")).toBe("not agentd's\n");
  });

  it("ends the interrupted run as crashed when its record is garbled", async () => {
    await restartAfter(
      (runs) => writeFileSync(path.join(runs, `${interrupted}.json`), "{garbled"),
      `${interrupted}.json`,
      [],
    );
  });

  it("ends the interrupted run as crashed when its record is empty", async () => {
    await restartAfter(
      (runs) => writeFileSync(path.join(runs, `${interrupted}.json`), ""),
      `${interrupted}.json`,
      [],
    );
  });

  it("starts with a folder where the interrupted run's checkpoint should be, and says why it cannot be resumed", async () => {
    const daemon = await restartAfter(
      (runs) => {
        const checkpoint = path.join(path.dirname(runs), "checkpoints", `${interrupted}.json`);
        rmSync(checkpoint, { force: true });
        mkdirSync(checkpoint, { recursive: true });
      },
      undefined,
      [/^skipping a checkpoint that cannot be read \(EISDIR\): the run cannot be resumed; move \S+ aside$/],
    );
    expect(await daemon.request("POST", `/runs/${interrupted}/resume`)).toMatchObject({
      status: 409,
      body: {
        error: {
          code: "CONFLICT",
          hint: expect.stringMatching(/a damaged one is named in the daemon's log/),
        },
      },
    });
  });

  it("starts with a file where runs/ should be", async () => {
    await restartAfter(
      (runs) => {
        rmSync(runs, { recursive: true });
        writeFileSync(runs, "not a folder\n");
      },
      "",
      [
        /^rebuilt the run records from the agent logs \(their tasks and definition hashes are unknown\)$/,
        /^rebuilt a missing or empty run log from its agent's log$/,
      ],
    );
  });
});
