import { execFileSync } from "node:child_process";
import { mkdirSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import type { AgentEvent } from "../../src/events/agent-event.js";
import {
  eventsOnDisk,
  followMerged,
  health,
  jsonlFiles,
  mountSmallTmpfs,
  tornLines,
  unmount,
} from "../support/small-disk.js";
import { runRecordOnDisk } from "../support/run-record-on-disk.js";
import { useTestKit } from "../support/test-kit.js";
import { waitFor } from "../support/wait-for.js";
import { getRun, startRun, waitForRunEnd } from "./api-shapes.js";

const kit = useTestKit();
const FLOOD = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../fixtures/cli/flood");

describe("a CLI worker flooding events while data_dir fills up", () => {
  it("is halted with its events held, loses and repeats nothing, and finishes once there is room", async (context) => {
    const project = kit.project({
      config: {
        store: { probe_interval: "150ms" },
        // The fixture is the command itself, so the sandbox binds it wherever the checkout is
        // (a sandbox hides /tmp, where a script named only as an argument would not be found).
        cli_tools: { flood: { command: FLOOD, args: ["{task}"], output: "claude" } },
      },
    });
    mkdirSync(project.dataDirectory, { recursive: true });
    if (!mountSmallTmpfs(project.dataDirectory, "2m")) {
      context.skip("cannot mount a tmpfs here (needs root): the flood test did not run");
      return;
    }
    kit.defer(() => unmount(project.dataDirectory));
    project.writeAgent("flooder", { worker: "cli", cli: { tool: "flood", fallback: "none" } });
    project.writeAgent("other", { worker: "cli", cli: { tool: "flood", fallback: "none" } });
    const daemon = await kit.daemon(project.configFile);

    // 3,000 messages of ~600 bytes, in the agent's log and the run's: far more than 2 MB.
    const run = await startRun(daemon, "flooder", "flood");
    const seen: AgentEvent[] = [];
    let cursor: string | undefined;
    await waitFor(async () => {
      const page = await followMerged(daemon, cursor);
      seen.push(...page.events);
      cursor = page.next;
      return (await health(daemon)).status === "degraded";
    }, "GET /health degraded");
    expect((await daemon.request("POST", "/agents/other/runs", { task: "x" })).status).toBe(507);
    // The fake CLI printed everything and exited before it could be halted: its run has ended,
    // but its end is not recorded before its held events are written (a kill -9 now would find a
    // completed run whose log lacks its last events and its end).
    const recordOnDisk = () => runRecordOnDisk(project.dataDirectory, run)?.status;
    expect((await getRun(daemon, run)).status).toBe("running");
    expect(recordOnDisk()).toBe("running");
    const whileFull = await followMerged(daemon, cursor);
    seen.push(...whileFull.events);
    cursor = whileFull.next;
    // Halted: nothing more is reported while the disk is full.
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect((await followMerged(daemon, cursor)).events).toEqual([]);
    expect(recordOnDisk()).toBe("running");

    execFileSync("mount", ["-o", "remount,size=64m", project.dataDirectory]);
    expect(await waitForRunEnd(daemon, run)).toMatchObject({ status: "completed", result: "flooded 3000" });
    await waitFor(async () => (await health(daemon)).status === "ok", "GET /health ok");
    for (const file of jsonlFiles(project.dataDirectory))
      expect({ file, torn: tornLines(file) }).toEqual({ file, torn: [] });
    const onDisk = eventsOnDisk(project.dataDirectory, "flooder");
    expect(onDisk.length).toBeGreaterThan(3_000);
    expect(onDisk.map((event) => event.id)).toEqual(onDisk.map((_, index) => index + 1));
    const byId = new Map(onDisk.map((event) => [event.id, event]));
    for (const event of seen) expect(byId.get(event.id)).toEqual(event);
  });
});
