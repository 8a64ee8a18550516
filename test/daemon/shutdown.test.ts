import { afterEach, describe, expect, it } from "vitest";
import { startDaemonProcess } from "../support/daemon-process.js";
import { startScriptedLlmServer, textReply } from "../support/scripted-llm-server.js";
import { getRun, listRuns, startRun } from "./api-shapes.js";
import { createWorkspace, waitFor } from "./daemon-workspace.js";

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

describe("SIGTERM", () => {
  it("lets a run finish within the grace period, stops the other with daemon_shutdown, and exits 0", async () => {
    const llm = await startScriptedLlmServer();
    cleanups.push(() => llm.close());
    llm.setDefaultReply((request) =>
      JSON.stringify(request.body?.messages ?? []).includes("finishes-in-grace")
        ? textReply("finished in time", { delayBeforeFirstChunkMs: 800 })
        : { type: "hang" },
    );
    const workspace = createWorkspace(llm.url, {
      shutdown: { grace: "3s" },
      limits: { max_concurrent_runs: 2 },
    });
    workspace.writeAgent("worker", {});
    const daemon = await startDaemonProcess({ configFile: workspace.configFile });
    cleanups.push(() => daemon.kill());
    const quick = await startRun(daemon, "worker", "finishes-in-grace");
    const endless = await startRun(daemon, "worker", "never answers");
    await llm.waitForChatRequests(2);

    daemon.signal("SIGTERM");
    await waitFor(
      async () => (daemon.stderr().includes("shutting down") ? true : undefined),
      "shutdown to begin",
    );
    const refused = await daemon.request("POST", "/agents/worker/runs", { task: "too late" });
    expect(refused.status).toBe(503);
    expect(refused.body).toMatchObject({ error: { code: "SHUTTING_DOWN" } });
    expect(await daemon.exited).toEqual({ code: 0, signal: null });

    const restarted = await startDaemonProcess({ configFile: workspace.configFile });
    cleanups.push(() => restarted.kill());
    expect(await getRun(restarted, quick)).toMatchObject({ status: "completed", result: "finished in time" });
    expect(await getRun(restarted, endless)).toMatchObject({ status: "stopped", reason: "daemon_shutdown" });
    expect(await listRuns(restarted, "?agent=worker")).toHaveLength(2);
  });
});
