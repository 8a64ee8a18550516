import { mkdtempSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { ConfigSchema } from "../../src/config/config-schema.js";
import type { AgentEvent } from "../../src/events/agent-event.js";
import { EventBus } from "../../src/events/event-bus.js";
import { createLogger } from "../../src/logging/logger.js";
import { RunControl } from "../../src/run-vocabulary/run-control.js";
import { SecretRedactor } from "../../src/secrets/secret-redactor.js";
import { builtinTools } from "../../src/tools/builtin/builtin-tools.js";
import { DefaultToolExecutor } from "../../src/tools/default-tool-executor.js";
import { CompositeToolCatalog, type ToolSource } from "../../src/tools/tool-catalog.js";
import { EnvVault } from "../../src/vault/env-vault.js";
import { makeDefinition } from "../support/make-definition.js";
import { testSandboxHost } from "../support/test-sandbox.js";

let workdir: string;
afterEach(() => rmSync(workdir, { recursive: true, force: true }));

/** An MCP-like source whose server can be made to fail or to hang on its next listing. */
function flakySource() {
  const state = { mode: "up" as "up" | "down" | "hanging" };
  const source: ToolSource = {
    owns: (name) => name.startsWith("mcp:"),
    find: async () => undefined,
    expand: () => {
      if (state.mode === "down") return Promise.reject(new Error("MCP server srv could not start"));
      if (state.mode === "hanging") return new Promise(() => undefined);
      return Promise.resolve([]);
    },
  };
  return { source, state };
}

function setup(source: ToolSource) {
  workdir = realpathSync(mkdtempSync(path.join(tmpdir(), "agentd-source-down-")));
  writeFileSync(path.join(workdir, "a.txt"), "hello\n");
  const executor = new DefaultToolExecutor({
    catalog: new CompositeToolCatalog(builtinTools(), [source]),
    approvals: { request: async () => ({ approved: false, state: "denied", scope: "once" }) },
    vault: new EnvVault({}),
    redactor: new SecretRedactor(),
    settings: ConfigSchema.parse({}).tools,
    sandbox: testSandboxHost(workdir),
    logger: createLogger({ level: "silent", pretty: false }),
  });
  const definition = makeDefinition({
    workdir,
    frontmatter: { tools: ["read_file", "mcp:srv/*"], permissions: { allow: ["read_file"] } },
  });
  const events: AgentEvent[] = [];
  const bus = new EventBus();
  bus.subscribe((event) => events.push(event));
  const call = (tool: string, control = new RunControl()) =>
    executor.execute(
      { callId: `c_${events.length}`, tool, argumentsJson: JSON.stringify({ path: "a.txt" }) },
      { runId: "r_x", definition, control, events: bus, setStatus: () => undefined },
    );
  return { executor, definition, call, events };
}

describe("an agent's MCP server going down", () => {
  it("leaves its built-in tools working, and fails only the calls to that server", async () => {
    const { source, state } = flakySource();
    const { call, events } = setup(source);
    state.mode = "down";
    expect(await call("read_file")).toMatchObject({ ok: true, output: expect.stringContaining("hello") });
    expect(await call("mcp__srv__search")).toMatchObject({ ok: false, code: "TOOL_FAILED" });
    expect(events.map((event) => event.type)).toEqual(["action", "observation", "action", "observation"]);
    expect(events[2]?.data).toMatchObject({ tool: "mcp:srv/search" });
  });

  it("does not hold a stop while the server it waits for is starting", async () => {
    const { source, state } = flakySource();
    const { call } = setup(source);
    state.mode = "hanging";
    const control = new RunControl();
    const pending = call("mcp__srv__search", control);
    setTimeout(() => control.stop("user_stop", "stopped by the user"), 100);
    await expect(pending).rejects.toMatchObject({ reason: "user_stop" });
  });
});
