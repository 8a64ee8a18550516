import { cpSync, mkdirSync, readdirSync, rmSync, truncateSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startDaemonProcess } from "../support/daemon-process.js";
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
 * Two cases hold: an emptied run index and a removed open-runs journal are rebuilt from the
 * records. SKIPPED, still failing (issue 26 item 3 is open for them):
 * - a folder where an index segment or a run's record should be, or a file where runs/ should be:
 *   the start stops with EISDIR or EEXIST and names no file to move aside;
 * - the interrupted run's runs/<run>.json garbled or empty: it is skipped with a warning and the
 *   run is served as `running` forever (no crashed end, no status event).
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

/** Starts a daemon on a damaged copy of the seed and checks what every damaged state must keep. */
async function restartAfter(damage: (runs: string) => void): Promise<void> {
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
}

describe("the daemon restarted on damaged run files", () => {
  it("lists every run again after the run index was emptied", async () => {
    await restartAfter((runs) => truncateSync(path.join(runs, "index", firstSegment(runs)), 0));
  });

  it("lists every run again after the open-runs journal was removed", async () => {
    await restartAfter((runs) => rmSync(path.join(runs, "open"), { recursive: true }));
  });

  it.skip("starts with a folder where an index segment should be", async () => {
    await restartAfter((runs) => {
      const segment = path.join(runs, "index", firstSegment(runs));
      rmSync(segment);
      mkdirSync(segment);
    });
  });

  it.skip("starts with a folder where a finished run's record should be", async () => {
    await restartAfter((runs) => {
      rmSync(path.join(runs, `${finished}.json`), { force: true });
      mkdirSync(path.join(runs, `${finished}.json`));
    });
  });

  it.skip("ends the interrupted run as crashed when its record is garbled", async () => {
    await restartAfter((runs) => writeFileSync(path.join(runs, `${interrupted}.json`), "{garbled"));
  });

  it.skip("ends the interrupted run as crashed when its record is empty", async () => {
    await restartAfter((runs) => writeFileSync(path.join(runs, `${interrupted}.json`), ""));
  });

  it.skip("starts with a file where runs/ should be", async () => {
    await restartAfter((runs) => {
      rmSync(runs, { recursive: true });
      writeFileSync(runs, "not a folder\n");
    });
  });
});
