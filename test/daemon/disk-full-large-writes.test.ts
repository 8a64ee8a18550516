import { mkdirSync, rmSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import type { AgentEvent } from "../../src/events/agent-event.js";
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
import { startRun, waitForRunEnd } from "./api-shapes.js";

const kit = useTestKit();

const MEBIBYTE = 1_048_576;

describe("a data_dir with less room left than one large write needs", () => {
  // The probe wrote 64 KB: with 600 KB free it passed, the episode ended, the held 900 KB event
  // failed again and a new episode began, at every probe (14 episodes in 3 s at 200 ms): /health
  // flickered to ok, new runs were let in, and the log and the episode counter filled up.
  it("stays full, in one episode, until the held write fits, then writes it whole", async (context) => {
    const { project } = await kit.scriptedProject(
      () => textReply(`done ${"y".repeat(900_000)}`, { chunkSize: 65_536 }),
      { config: { store: { probe_interval: "100ms" } } },
    );
    mkdirSync(project.dataDirectory, { recursive: true });
    if (!mountSmallTmpfs(project.dataDirectory, "4m")) {
      context.skip("cannot mount a tmpfs here (needs root): the large-write test did not run");
      return;
    }
    kit.defer(() => unmount(project.dataDirectory));
    project.writeAgent("writer", { limits: { max_tokens: 5_000_000, max_cost_usd: 1_000 } });
    project.writeAgent("other", {});
    const daemon = await kit.daemon(project.configFile);
    const ballast = path.join(project.dataDirectory, "ballast");
    fillUp(ballast, 4 * MEBIBYTE - 600_000);

    const run = await startRun(daemon, "writer", "a large answer");
    await waitFor(async () => (await health(daemon)).status === "degraded", "GET /health degraded");
    // Ten probes or more: every one of them must find the store still full.
    const statuses = new Set<string>();
    for (const deadline = Date.now() + 1_500; Date.now() < deadline;) {
      statuses.add((await health(daemon)).status);
      const refused = await daemon.request("POST", "/agents/other/runs", { task: "refused" });
      expect(refused.status).toBe(507);
    }
    expect([...statuses]).toEqual(["degraded"]);
    const metrics = await (await fetch(`${daemon.url}/metrics`, { headers: daemon.headers() })).text();
    expect(metrics).toMatch(/^agentd_storage_full_episodes_total 1$/m);
    expect(daemon.stderr().split("the store is full").length - 1).toBe(1);

    rmSync(ballast);
    expect(await waitForRunEnd(daemon, run)).toMatchObject({ status: "completed" });
    await waitFor(async () => (await health(daemon)).status === "ok", "GET /health ok");
    for (const file of jsonlFiles(project.dataDirectory))
      expect({ file, torn: tornLines(file) }).toEqual({ file, torn: [] });
    const onDisk = eventsOnDisk(project.dataDirectory, "writer");
    expect(onDisk.map((event) => event.id)).toEqual(onDisk.map((_, index) => index + 1));
    const result = onDisk.find((event) => event.type === "result") as AgentEvent | undefined;
    expect(JSON.stringify(result?.data).length).toBeGreaterThan(900_000);
  });
});
