import { readFileSync } from "node:fs";
import path from "node:path";
import { agentd } from "../support/agentd-cli.js";
import { describe, expect, it } from "vitest";
import { startDaemonProcess } from "../support/daemon-process.js";
import { textReply } from "../support/scripted-llm-server.js";
import { agentEvents, getRun, startRun } from "./api-shapes.js";
import { useTestKit } from "../support/test-kit.js";
import { waitFor } from "../support/wait-for.js";

const kit = useTestKit();

describe("one daemon per data_dir", { timeout: 90_000 }, () => {
  it("refuses a second daemon on the folder at once, naming the holder, and leaves the first one's runs alone", async () => {
    const llm = await kit.scriptedLlm();
    llm.setDefaultReply((request) =>
      JSON.stringify(request.body?.messages ?? []).includes("slow") ? { type: "hang" } : textReply("done"),
    );
    const workspace = kit.project({ llmUrl: llm.url });
    workspace.writeAgent("worker", {});
    const first = await kit.daemon(workspace.configFile);
    const slow = await startRun(first, "worker", "slow work");
    await waitFor(
      async () => ((await getRun(first, slow)).status === "running" ? true : undefined),
      "the run",
    );

    // Same config, so the same folder (port 0: another port): this used to start a second scheduler
    // whose crash recovery marked the first daemon's live runs crashed.
    const second = await agentd(["start", "--config", workspace.configFile]);
    expect(second.exitCode).toBe(1);
    expect(second.stderr).toContain("DATA_DIR_LOCKED");
    expect(second.stderr).toContain(`pid ${first.pid}`);
    expect(second.stderr).toContain(first.url);
    expect(second.stdout).not.toContain("listening");

    expect(await getRun(first, slow)).toMatchObject({ status: "running" });
    const events = await agentEvents(first, "worker");
    expect(events.filter((event) => JSON.stringify(event.data).includes("crashed"))).toEqual([]);
    expect(events.map((event) => event.id)).toEqual(events.map((_, index) => index + 1));
  });

  it("takes over the lock of a daemon killed with -9", async () => {
    const workspace = kit.project({ llmUrl: "http://127.0.0.1:9/v1" });
    const first = await startDaemonProcess({ configFile: workspace.configFile });
    await first.kill();
    const lock = JSON.parse(readFileSync(path.join(workspace.dataDirectory, "agentd.lock"), "utf8")) as {
      pid: number;
    };
    expect(lock.pid).toBe(first.pid);
    const second = await kit.daemon(workspace.configFile);
    expect((await second.request("GET", "/agents")).status).toBe(200);
    second.signal("SIGTERM");
    expect(await second.exited).toEqual({ code: 0, signal: null });
    // A clean stop leaves no lock behind.
    expect(() => readFileSync(path.join(workspace.dataDirectory, "agentd.lock"))).toThrow();
  });
});
