import { randomUUID } from "node:crypto";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { startSingleRun } from "../../src/app/compose-run.js";
import { ConfigSchema } from "../../src/config/config-schema.js";
import { createLogger } from "../../src/logging/logger.js";

import { makeDefinition } from "../support/make-definition.js";
import {
  type ScriptedLlmServer,
  startScriptedLlmServer,
  textReply,
  toolCallReply,
} from "../support/scripted-llm-server.js";
import { fixtureServer, processesWith } from "./mcp-test-kit.js";
import { waitFor } from "../support/wait-for.js";

let llm: ScriptedLlmServer;
let dataDirectory: string;
beforeEach(async () => {
  llm = await startScriptedLlmServer();
  dataDirectory = await mkdtemp(path.join(tmpdir(), "agentd-mcp-run-"));
});
afterEach(async () => {
  await llm.close();
  await rm(dataDirectory, { recursive: true, force: true });
});

describe("agentd run with an MCP server", () => {
  it("offers the server's tools to the model, runs the call, and ends the server with the run", async () => {
    llm.enqueue(toolCallReply({ name: "mcp__fixture__pids", arguments: {} }), textReply("done"));
    // The server runs in its own PID namespace: the host finds its processes by this argument.
    const tag = `--test-tag=${randomUUID()}`;
    const config = ConfigSchema.parse({
      data_dir: dataDirectory,
      llm: { base_url: llm.url, api_key: "test-key", model: "test-model" },
      vault: { backend: "env" },
      cli: { kill_grace: 1_000 },
      mcp_servers: { fixture: fixtureServer(["--with-helper", tag]) },
    });
    const run = await startSingleRun({
      config,
      definition: makeDefinition({
        frontmatter: { tools: ["mcp:fixture/*"], permissions: { allow: ["mcp:fixture/pids"] } },
      }),
      task: "Tell me the pids",
      onEvent: () => undefined,
      logger: createLogger({ level: "silent", pretty: false }),
    });
    const record = await run.finished;
    expect(record.status).toBe("completed");
    const [first, second] = llm.chatRequests;
    expect(first?.body?.tools?.map((tool) => tool.function.name)).toContain("mcp__fixture__pids");
    const toolMessage = second?.body?.messages.find((message) => message.role === "tool");
    const pids = JSON.parse(String(toolMessage?.content)) as { server: number; helper: number };
    expect(pids.server).toBeGreaterThan(0);
    await waitFor(() => processesWith(tag).length === 0, "the MCP server processes to end");
  });

  it("ends the run with tool_error, not crashed, when the server will not start", async () => {
    const config = ConfigSchema.parse({
      data_dir: dataDirectory,
      llm: { base_url: llm.url, api_key: "test-key", model: "test-model" },
      vault: { backend: "env" },
      mcp_servers: { broken: { command: path.join(dataDirectory, "no-such-server") } },
    });
    const run = await startSingleRun({
      config,
      definition: makeDefinition({ frontmatter: { tools: ["mcp:broken/*"] } }),
      task: "Use the broken server",
      onEvent: () => undefined,
      logger: createLogger({ level: "silent", pretty: false }),
    });
    const record = await run.finished;
    expect(record).toMatchObject({
      status: "failed",
      reason: "tool_error",
      error: { code: "MCP_UNAVAILABLE" },
    });
    expect(record.error?.message).toContain("broken");
  });
});
