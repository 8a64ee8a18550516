import { mkdirSync, rmSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { textReply } from "../support/scripted-llm-server.js";
import {
  eventsOnDisk,
  fillUp,
  health,
  jsonlFiles,
  mountQuotaLimited,
  tornLines,
  unmount,
} from "../support/small-disk.js";
import { useTestKit } from "../support/test-kit.js";
import { waitFor } from "../support/wait-for.js";
import { startRun, waitForRunEnd } from "./api-shapes.js";

const kit = useTestKit();

describe("a data_dir over its quota", () => {
  // Issue 26: "when a write fails for lack of space (or quota, …)". A real quota, not a mock:
  // a btrfs quota group, which root cannot pass (see mountQuotaLimited).
  it(
    "is a full store (EDQUOT): 507 and degraded, nothing torn, then ok by itself once there is room",
    { timeout: 60_000 },
    async (context) => {
      const { project } = await kit.scriptedProject(() => textReply(`done ${"q".repeat(20_000)}`), {
        config: { store: { probe_interval: "150ms" } },
      });
      mkdirSync(project.dataDirectory, { recursive: true });
      if (!mountQuotaLimited(project.dataDirectory, path.join(project.root, "quota.img"), "4m")) {
        context.skip("cannot mount a quota-limited btrfs here (needs root, a loop device and btrfs-progs)");
        return;
      }
      kit.defer(() => unmount(project.dataDirectory));
      project.writeAgent("writer", {});
      const daemon = await kit.daemon(project.configFile);

      const filler = path.join(project.dataDirectory, "filler");
      fillUp(filler);
      // The run's creation or its large result meets the quota (whichever write comes first).
      const meeting = await daemon.request("POST", "/agents/writer/runs", { task: "meets the quota" });
      expect([202, 507]).toContain(meeting.status);
      await waitFor(async () => (await health(daemon)).status === "degraded", "GET /health degraded");
      expect(await health(daemon)).toMatchObject({
        reasons: [{ code: "STORAGE_FULL", error: "EDQUOT", message: expect.stringContaining("EDQUOT") }],
      });
      const refused = await daemon.request("POST", "/agents/writer/runs", { task: "refused" });
      expect(refused).toMatchObject({
        status: 507,
        body: { error: { code: "STORAGE_FULL", message: expect.stringContaining("EDQUOT") } },
      });
      expect(daemon.stderr()).toMatch(/the store is full \(EDQUOT\).*raise its quota/);
      for (const file of jsonlFiles(project.dataDirectory))
        expect({ file, torn: tornLines(file) }).toEqual({ file, torn: [] });

      rmSync(filler);
      await waitFor(async () => (await health(daemon)).status === "ok", "GET /health ok");
      expect(daemon.stderr()).toContain("the store can write again");
      if (meeting.status === 202) {
        const { run } = meeting.body as { run: string };
        expect(await waitForRunEnd(daemon, run)).toMatchObject({ status: "completed" });
      }
      const after = await startRun(daemon, "writer", "after");
      expect(await waitForRunEnd(daemon, after)).toMatchObject({ status: "completed" });
      for (const file of jsonlFiles(project.dataDirectory))
        expect({ file, torn: tornLines(file) }).toEqual({ file, torn: [] });
      const ids = eventsOnDisk(project.dataDirectory, "writer").map((event) => event.id);
      expect(ids).toEqual(ids.map((_, index) => index + 1));
    },
  );
});
