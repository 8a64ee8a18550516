import { mkdirSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { textReply } from "../support/scripted-llm-server.js";
import { health, mountSmallTmpfs, remount, unmount } from "../support/small-disk.js";
import { useTestKit } from "../support/test-kit.js";
import { waitFor } from "../support/wait-for.js";
import { startRun, waitForRunEnd } from "./api-shapes.js";

const kit = useTestKit();

describe("a data_dir remounted read-only", () => {
  it("is a full store (EROFS): 507 and degraded, then ok by itself once writable again", async (context) => {
    const { project } = await kit.scriptedProject(() => textReply("done"), {
      config: { store: { probe_interval: "150ms" } },
    });
    mkdirSync(project.dataDirectory, { recursive: true });
    if (!mountSmallTmpfs(project.dataDirectory, "4m")) {
      context.skip("cannot mount a tmpfs here (needs root): the read-only test did not run");
      return;
    }
    kit.defer(() => unmount(project.dataDirectory));
    project.writeAgent("writer", {});
    // A fresh start keeps no log open for writing, so the kernel lets the remount through.
    const daemon = await kit.daemon(project.configFile);
    remount(project.dataDirectory, true);
    kit.defer(() => {
      try {
        remount(project.dataDirectory, false);
      } catch {
        // unmounted already
      }
    });

    const refused = await daemon.request("POST", "/agents/writer/runs", { task: "refused" });
    expect(refused).toMatchObject({ status: 507, body: { error: { code: "STORAGE_FULL" } } });
    expect(await health(daemon)).toMatchObject({
      status: "degraded",
      reasons: [{ code: "STORAGE_FULL", error: "EROFS", file: expect.stringMatching(/^runs\/index\//) }],
    });

    remount(project.dataDirectory, false);
    await waitFor(async () => (await health(daemon)).status === "ok", "GET /health ok");
    const run = await startRun(daemon, "writer", "after");
    expect(await waitForRunEnd(daemon, run)).toMatchObject({ status: "completed" });
  });
});
