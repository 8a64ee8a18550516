import { describe, expect, it } from "vitest";
import { fixtureServer } from "../mcp/mcp-test-kit.js";
import { textReply } from "../support/scripted-llm-server.js";
import { getRun, listRuns, startRun } from "./api-shapes.js";
import { useTestKit } from "../support/test-kit.js";
import { waitFor } from "../support/wait-for.js";

const kit = useTestKit();

describe("SIGTERM", () => {
  it("lets a run finish within the grace period, stops the other with daemon_shutdown, and exits 0", async () => {
    const llm = await kit.scriptedLlm();
    llm.setDefaultReply((request) =>
      JSON.stringify(request.body?.messages ?? []).includes("finishes-in-grace")
        ? textReply("finished in time", { delayBeforeFirstChunkMs: 800 })
        : { type: "hang" },
    );
    const workspace = kit.project({
      llmUrl: llm.url,
      config: {
        shutdown: { grace: "3s" },
        limits: { max_concurrent_runs: 2 },
      },
    });
    workspace.writeAgent("worker", {});
    const daemon = await kit.daemon(workspace.configFile);
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

    const restarted = await kit.daemon(workspace.configFile);
    expect(await getRun(restarted, quick)).toMatchObject({ status: "completed", result: "finished in time" });
    expect(await getRun(restarted, endless)).toMatchObject({ status: "stopped", reason: "daemon_shutdown" });
    expect(await listRuns(restarted, "?agent=worker")).toHaveLength(2);
  });

  it("exits 0 by itself with an MCP server started, a CLI child running and an event stream open", async () => {
    const llm = await kit.scriptedLlm();
    llm.setDefaultReply({ type: "hang" });
    const workspace = kit.project({
      llmUrl: llm.url,
      config: {
        shutdown: { grace: "1s" },
        mcp_servers: { fixture: fixtureServer() },
        cli_tools: {
          sleeper: { command: "bash", args: ["-c", "sleep 300 & sleep 300; wait # {task}"], output: "text" },
        },
      },
    });
    workspace.writeAgent("lister", { tools: ["mcp:fixture/*"] });
    workspace.writeAgent("sleeper", { worker: "cli", cli: { tool: "sleeper", fallback: "none" } });
    const daemon = await kit.daemon(workspace.configFile);
    // The LLM run reaches the model only once the MCP server started and listed its tools.
    const listing = await startRun(daemon, "lister", "list");
    await llm.waitForChatRequests(1, 30_000);
    const sleeping = await startRun(daemon, "sleeper", "sleep");
    await waitFor(
      async () => ((await getRun(daemon, sleeping)).status === "running" ? true : undefined),
      "the CLI run",
    );
    const stream = new AbortController();
    kit.defer(async () => stream.abort());
    const events = await fetch(`${daemon.url}/agents/lister/events/stream`, {
      headers: daemon.headers(),
      signal: stream.signal,
    });
    await events.body?.getReader().read();

    daemon.signal("SIGTERM");

    expect(await daemon.exited).toEqual({ code: 0, signal: null });
    expect(daemon.stderr()).not.toContain("still keeps its process running");
    const restarted = await kit.daemon(workspace.configFile);
    expect(await getRun(restarted, listing)).toMatchObject({ status: "stopped", reason: "daemon_shutdown" });
    expect(await getRun(restarted, sleeping)).toMatchObject({ status: "stopped", reason: "daemon_shutdown" });
  });
});
