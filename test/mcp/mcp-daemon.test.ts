import { describe, expect, it } from "vitest";
import { randomUUID } from "node:crypto";
import { getRun, runEvents, startRun } from "../daemon/api-shapes.js";
import { useTestKit } from "../support/test-kit.js";
import { waitFor } from "../support/wait-for.js";
import { textReply, toolCallReply } from "../support/scripted-llm-server.js";
import { fixtureServer, processesWith } from "./mcp-test-kit.js";

const kit = useTestKit();

describe("the daemon with MCP servers", () => {
  it("runs an MCP tool for an agent and ends the server's processes on SIGTERM", async () => {
    const llm = await kit.scriptedLlm();
    llm.enqueue(toolCallReply({ name: "mcp__fixture__pids", arguments: {} }), textReply("done"));
    // The server runs in its own PID namespace: the host finds its processes by this argument.
    const tag = `--test-tag=${randomUUID()}`;
    // A configured server that cannot start harms no one who does not use it: servers start lazily.
    const workspace = kit.project({
      llmUrl: llm.url,
      config: {
        vault: { backend: "env" },
        mcp_servers: {
          fixture: fixtureServer(["--with-helper", tag]),
          broken: { command: "/nonexistent/mcp" },
        },
      },
    });
    workspace.writeAgent("mcp-user", {
      tools: ["mcp:fixture/*"],
      permissions: { allow: ["mcp:fixture/pids"] },
    });
    const daemon = await kit.daemon(workspace.configFile);

    const run = await startRun(daemon, "mcp-user", "Tell me the pids");
    const record = await waitFor(async () => {
      const current = await getRun(daemon, run);
      return ["completed", "failed", "stopped"].includes(current.status) ? current : undefined;
    }, "the run to end");
    expect(record).toMatchObject({ status: "completed", result: "done" });
    const observation = (await runEvents(daemon, run)).find((event) => event.type === "observation");
    expect(observation?.data).toMatchObject({ tool: "mcp:fixture/pids", ok: true });
    const pids = JSON.parse(String((observation?.data as { output: string }).output)) as {
      server: number;
      helper: number;
    };
    expect(pids.helper).toBeGreaterThan(0);
    expect(processesWith(tag).length).toBeGreaterThan(0);

    daemon.signal("SIGTERM");
    expect(await daemon.exited).toEqual({ code: 0, signal: null });
    await waitFor(() => processesWith(tag).length === 0, "the MCP server processes to end");
  });
});
