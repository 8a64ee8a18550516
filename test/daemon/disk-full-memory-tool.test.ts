import { mkdirSync, rmSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { textReply, toolCallReply } from "../support/scripted-llm-server.js";
import { fillUp, health, mountSmallTmpfs, unmount } from "../support/small-disk.js";
import { useTestKit } from "../support/test-kit.js";
import { waitFor } from "../support/wait-for.js";
import { getRun, startRun, waitForRunEnd } from "./api-shapes.js";

const kit = useTestKit();

/**
 * An agent's memory_add on a full disk is the daemon's full state, as an operator's PUT of a
 * memory is: GET /health degraded naming the memory's file, new runs refused with 507, and the
 * note written (not lost) once space returns. Only the memory folder is a small tmpfs here, so
 * that the run's events still fit and nothing but the memory write can start the full state.
 */
describe("an agent's memory write on a full disk", () => {
  it("turns the daemon full, waits for room, and keeps the note once space returns", async (context) => {
    const { llm, project } = await kit.scriptedProject(() => textReply("done"), {
      // Long enough that the checks below fall in the first episode: the probe writes in data_dir,
      // which has room here, so each probe ends an episode that the waiting write starts again.
      config: { store: { probe_interval: "1s" } },
    });
    const memoryFolder = path.join(project.dataDirectory, "memory");
    mkdirSync(memoryFolder, { recursive: true });
    if (!mountSmallTmpfs(memoryFolder, "64k")) {
      context.skip("cannot mount a tmpfs here (needs root): the test did not run");
      return;
    }
    kit.defer(() => unmount(memoryFolder));
    mkdirSync(path.join(memoryFolder, "agents"));
    project.writeAgent("keeper", { memory: "write" });
    project.writeAgent("other", {});
    const daemon = await kit.daemon(project.configFile);
    const filler = path.join(memoryFolder, "filler");
    fillUp(filler);

    llm.enqueue(toolCallReply({ name: "memory_add", arguments: { text: "Deploys go out on Tuesdays." } }));
    const run = await startRun(daemon, "keeper", "learn");
    await waitFor(async () => (await health(daemon)).status === "degraded", "GET /health degraded");
    expect((await health(daemon)).reasons).toMatchObject([
      { code: "STORAGE_FULL", error: "ENOSPC", file: expect.stringMatching(/^memory\//) },
    ]);
    const refused = await daemon.request("POST", "/agents/other/runs", { task: "go" });
    expect(refused).toMatchObject({ status: 507, body: { error: { code: "STORAGE_FULL" } } });
    expect((await getRun(daemon, run)).status).toBe("running");

    rmSync(filler);
    const record = await waitForRunEnd(daemon, run);
    expect(record.status).toBe("completed");
    expect((await daemon.request("GET", "/agents/keeper/memory")).body).toMatchObject({
      content: "Deploys go out on Tuesdays.\n",
    });
    await waitFor(async () => (await health(daemon)).status === "ok", "GET /health ok");
  });
});
