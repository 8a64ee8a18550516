import { mkdirSync, readdirSync, rmSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { startDaemonProcess } from "../support/daemon-process.js";
import { textReply } from "../support/scripted-llm-server.js";
import {
  eventsOnDisk,
  fillUp,
  health,
  jsonlFiles,
  mountSmallTmpfs,
  tornLines,
  unmount,
} from "../support/small-disk.js";
import { useTestKit } from "../support/test-kit.js";
import { waitFor } from "../support/wait-for.js";
import { agentEvents, getRun, startRun, waitForRunEnd } from "./api-shapes.js";

const kit = useTestKit();

describe("a daemon started on a full data_dir", () => {
  // Before: `error INTERNAL: ENOSPC: no space left on device, write`, and each attempt left an
  // `agentd.lock.<pid>.<hex>.tmp` or `api.token.<pid>.tmp` behind.
  it(
    "loses nothing reported when killed while full, says STORAGE_FULL at start and leaves nothing behind, then starts once there is room",
    { timeout: 90_000 },
    async (context) => {
      let letGo!: () => void;
      const answer = new Promise<void>((resolve) => (letGo = resolve));
      const { project } = await kit.scriptedProject(
        async (request) => {
          if (JSON.stringify(request.body?.messages ?? []).includes("wait")) await answer;
          return textReply("done");
        },
        { config: { store: { probe_interval: "150ms" } } },
      );
      kit.defer(() => letGo());
      mkdirSync(project.dataDirectory, { recursive: true });
      if (!mountSmallTmpfs(project.dataDirectory, "2m")) {
        context.skip("cannot mount a tmpfs here (needs root): the start-while-full test did not run");
        return;
      }
      kit.defer(() => unmount(project.dataDirectory));
      project.writeAgent("writer", {});
      const first = await kit.daemon(project.configFile);
      const cut = await startRun(first, "writer", "wait for the test");
      await waitFor(async () => (await getRun(first, cut)).status === "running", "the run running");
      // The disk fills while the run waits for its answer: the run's end is held, unreported, and
      // the daemon is killed so (the case: a reported event gone, ids given twice).
      const filler = path.join(project.dataDirectory, "filler");
      fillUp(filler);
      letGo();
      await waitFor(async () => (await health(first)).status === "degraded", "GET /health degraded");
      const reported = await agentEvents(first, "writer");
      await first.kill();
      const before = readdirSync(project.dataDirectory, { recursive: true, encoding: "utf8" }).sort();
      await expect(startDaemonProcess({ configFile: project.configFile })).rejects.toThrow(
        /error STORAGE_FULL: the disk has no room \(ENOSPC\).*free space in data_dir/,
      );
      expect(readdirSync(project.dataDirectory, { recursive: true, encoding: "utf8" }).sort()).toEqual(
        before,
      );

      rmSync(filler);
      const second = await kit.daemon(project.configFile);
      expect(await waitForRunEnd(second, cut)).toMatchObject({ status: "failed", reason: "crashed" });
      expect((await health(second)).status).toBe("ok");
      const next = await startRun(second, "writer", "after");
      expect(await waitForRunEnd(second, next)).toMatchObject({ status: "completed" });
      for (const file of jsonlFiles(project.dataDirectory))
        expect({ file, torn: tornLines(file) }).toEqual({ file, torn: [] });
      const ids = eventsOnDisk(project.dataDirectory, "writer").map((event) => event.id);
      expect(ids).toEqual(ids.map((_, index) => index + 1));
      // Nothing reported was lost; every id given after the restart is above the ones reported.
      const served = await agentEvents(second, "writer");
      for (const event of reported) expect(served).toContainEqual(event);
      const highest = Math.max(...reported.map((event) => event.id));
      const fresh = served.filter((event) => !reported.some((one) => one.id === event.id));
      expect(fresh.length).toBeGreaterThan(0);
      for (const event of fresh) expect(event.id).toBeGreaterThan(highest);
      // The full disk left nothing to repair: the restart's warnings are the crashed run's alone.
      const warnings = second
        .stderr()
        .split("\n")
        .filter((line) => line.startsWith("{"))
        .map((line) => JSON.parse(line) as { level: number; msg: string; run?: string; code?: string })
        .filter((line) => line.level >= 40 && line.code !== "SANDBOX_LIMITS_ROOT");
      expect(warnings.map((line) => line.msg)).toEqual([
        "run interrupted by a crash marked failed (crashed)",
        "run ended",
      ]);
      expect(warnings.every((line) => line.run === cut)).toBe(true);
    },
  );
});
