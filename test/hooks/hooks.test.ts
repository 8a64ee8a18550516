import { existsSync, mkdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import type { AgentEvent } from "../../src/events/agent-event.js";
import type { RunRecord } from "../../src/run-vocabulary/run-record.js";
import {
  type RecordedRequest,
  type ScriptedReplyValue,
  textReply,
  toolCallReply,
} from "../support/scripted-llm-server.js";
import { runEvents, startRun, waitForRunEnd } from "../daemon/api-shapes.js";
import { useScriptedDaemon } from "../support/scripted-daemon.js";

const SECRET = "hook-Secret-71c2e9d4";

/** Each run's task names its script: the model's answer for round 1, 2, … (counted from the request). */
const scripts: Record<string, ScriptedReplyValue[]> = {};

function scriptedReply(request: RecordedRequest): ScriptedReplyValue {
  const messages = request.body?.messages ?? [];
  const task = String(messages.find((message) => message.role === "user")?.content ?? "");
  const round = messages.filter((message) => message.role === "assistant").length;
  return scripts[task]?.[round] ?? textReply("no script");
}

/** The requests of one run's conversation, in order. */
function requestsOf(task: string): RecordedRequest[] {
  return scripted.llm.chatRequests.filter((request) =>
    (request.body?.messages ?? []).some((message) => message.role === "user" && message.content === task),
  );
}

function toolMessages(request: RecordedRequest | undefined): string[] {
  return (request?.body?.messages ?? [])
    .filter((message) => message.role === "tool")
    .map((message) => String(message.content));
}

function workdir(agent: string): string {
  return path.join(scripted.project.root, `work-${agent}`);
}

async function runToEnd(agent: string, task: string): Promise<{ record: RunRecord; events: AgentEvent[] }> {
  const run = await startRun(scripted.daemon, agent, task);
  const record = await waitForRunEnd(scripted.daemon, run, 60_000);
  return { record, events: await runEvents(scripted.daemon, run) };
}

function hookEvents(events: readonly AgentEvent[]) {
  return events.flatMap((event) => (event.type === "hook" ? [event.data] : []));
}

const scripted = useScriptedDaemon({
  reply: scriptedReply,
  config: {
    vault: { backend: "env" },
    // Runs first, before every agent's own hooks.
    hooks: { on_run_end: ["true"] },
  },
  environment: { AGENTD_SECRET_TOKEN: SECRET },
  agents: (project) => {
    const agent = (id: string, frontmatter: Record<string, unknown>) => {
      mkdirSync(path.join(project.root, `work-${id}`));
      project.writeAgent(id, { workdir: `work-${id}`, ...frontmatter });
    };
    const writer = {
      tools: ["write_file", "read_file"],
      permissions: { allow: ["write_file", "read_file"] },
    };
    agent("guarded", {
      ...writer,
      hooks: { before_tool: 'cat > before-tool.json; echo "no files today, ask the owner" >&2; exit 2' },
    });
    agent("watched", {
      ...writer,
      hooks: {
        after_tool: [
          "cat > after-tool.json",
          { command: "touch not-for-write-file.txt", tools: ["shell", "read_*"] },
        ],
        on_run_end: ["cat > run-end.json"],
      },
    });
    agent("flaky", {
      ...writer,
      hooks: {
        before_tool: [{ command: "sleep 30", timeout: "1s" }, "echo broken >&2; exit 1"],
        on_run_end: "exit 1",
      },
    });
    agent("nosy", {
      ...writer,
      hooks: {
        before_tool: `(ls -A "${project.dataDirectory}"; cat "${project.dataDirectory}/api.token") > seen.txt 2>&1; exit 0`,
      },
    });
    agent("keeper", {
      ...writer,
      secrets: ["token"],
      hooks: {
        before_tool: `if grep -q '"read_file"'; then cat secret.txt >&2; exit 2; fi`,
        after_tool: "cat >> after-tool.jsonl",
      },
    });
    agent("reader", {
      capabilities: "read-only",
      tools: ["read_file", "write_file", "shell", "list_dir"],
      permissions: { allow: ["list_dir", "read_file"] },
      hooks: { before_tool: "touch hook-wrote.txt" },
    });
    agent("silent", { capabilities: "no-tools", tools: ["read_file"] });
  },
});

describe("hooks", () => {
  it("a before_tool hook that exits 2 denies the call: the tool does not run and the model reads the reason", async () => {
    scripts["deny"] = [
      toolCallReply({ name: "write_file", arguments: { path: "marker.txt", content: "ran" } }),
      textReply("understood"),
    ];
    const { record, events } = await runToEnd("guarded", "deny");
    expect(record).toMatchObject({ status: "completed", result: "understood" });
    expect(existsSync(path.join(workdir("guarded"), "marker.txt"))).toBe(false);
    const [, second] = requestsOf("deny");
    expect(toolMessages(second).join("\n")).toContain("no files today, ask the owner");
    expect(hookEvents(events)).toContainEqual(
      expect.objectContaining({
        hook: "before_tool",
        outcome: "denied",
        tool: "write_file",
        exit_code: 2,
        message: "no files today, ask the owner",
      }),
    );
    const observation = events.find((event) => event.type === "observation");
    expect(observation?.data).toMatchObject({ ok: false, tool: "write_file" });
    expect(events.some((event) => event.type === "error")).toBe(false);
    // The hook read the call in Claude Code's shape.
    const input = JSON.parse(readFileSync(path.join(workdir("guarded"), "before-tool.json"), "utf8"));
    expect(input).toMatchObject({
      hook_event_name: "before_tool",
      session_id: record.id,
      run_id: record.id,
      agent: "guarded",
      tool_name: "write_file",
      tool_input: { path: "marker.txt", content: "ran" },
    });
  }, 90_000);

  it("after_tool reads the call's result and on_run_end the run's status", async () => {
    scripts["watch"] = [
      toolCallReply({ name: "write_file", arguments: { path: "hello.txt", content: "hello" } }),
      textReply("all done"),
    ];
    const { record, events } = await runToEnd("watched", "watch");
    expect(record).toMatchObject({ status: "completed", result: "all done" });
    const afterTool = JSON.parse(readFileSync(path.join(workdir("watched"), "after-tool.json"), "utf8"));
    expect(afterTool).toMatchObject({
      hook_event_name: "after_tool",
      run_id: record.id,
      tool_name: "write_file",
      tool_input: { path: "hello.txt", content: "hello" },
      tool_response: { ok: true },
    });
    expect(afterTool.tool_response.output).toContain("hello.txt");
    // The hook limited to other tools did not run.
    expect(existsSync(path.join(workdir("watched"), "not-for-write-file.txt"))).toBe(false);
    expect(hookEvents(events).filter((data) => data.hook === "after_tool")).toHaveLength(1);
    const runEnd = JSON.parse(readFileSync(path.join(workdir("watched"), "run-end.json"), "utf8"));
    expect(runEnd).toMatchObject({
      hook_event_name: "on_run_end",
      run_id: record.id,
      status: "completed",
      result: "all done",
    });
    // The config's on_run_end hook ran first, then the agent's, before the final status.
    const ends = hookEvents(events).filter((data) => data.hook === "on_run_end");
    expect(ends.map((data) => [data.command, data.outcome])).toEqual([
      ["true", "ok"],
      ["cat > run-end.json", "ok"],
    ]);
    const lastHook = events.findLastIndex((event) => event.type === "hook");
    const finalStatus = events.findLastIndex((event) => event.type === "status");
    expect(lastHook).toBeLessThan(finalStatus);
  }, 90_000);

  it("a hook that times out or exits 1 is reported as failed, and the tool and the run go on", async () => {
    scripts["flaky"] = [
      toolCallReply({ name: "write_file", arguments: { path: "ran.txt", content: "ran" } }),
      textReply("went on"),
    ];
    const { record, events } = await runToEnd("flaky", "flaky");
    expect(record).toMatchObject({ status: "completed", result: "went on" });
    expect(readFileSync(path.join(workdir("flaky"), "ran.txt"), "utf8")).toBe("ran");
    const failed = hookEvents(events).filter((data) => data.outcome === "failed");
    expect(failed).toEqual([
      expect.objectContaining({ hook: "before_tool", command: "sleep 30", code: "HOOK_FAILED" }),
      expect.objectContaining({ hook: "before_tool", exit_code: 1, code: "HOOK_FAILED" }),
      expect.objectContaining({ hook: "on_run_end", exit_code: 1, code: "HOOK_FAILED" }),
    ]);
    expect(failed[0]?.message).toContain("timed out after 1 s");
    expect(failed[1]?.message).toContain("broken");
    expect(scripted.daemon.stderr()).toContain("hook failed");
  }, 90_000);

  it("a hook runs in the agent's sandbox: data_dir and the API token are out of its sight", async () => {
    scripts["nosy"] = [
      toolCallReply({ name: "write_file", arguments: { path: "x.txt", content: "x" } }),
      textReply("looked"),
    ];
    const { record } = await runToEnd("nosy", "nosy");
    expect(record.status).toBe("completed");
    const seen = readFileSync(path.join(workdir("nosy"), "seen.txt"), "utf8");
    expect(scripted.daemon.token).toBeDefined();
    expect(seen).not.toContain(scripted.daemon.token as string);
    expect(seen).not.toMatch(/api\.token\n|runs\n|events\n/);
    // data_dir is an empty folder inside the sandbox: the token file is not there to read.
    expect(seen).toMatch(/No such file or directory/);
  }, 90_000);

  it("never shows a secret value to a hook, in its stdin or through its stderr", async () => {
    scripts["secret"] = [
      toolCallReply({ name: "write_file", arguments: { path: "secret.txt", content: "{{secret:token}}" } }),
      toolCallReply({ name: "read_file", arguments: { path: "secret.txt" } }),
      textReply("kept"),
    ];
    const { record, events } = await runToEnd("keeper", "secret");
    expect(record.status).toBe("completed");
    const folder = workdir("keeper");
    expect(readFileSync(path.join(folder, "secret.txt"), "utf8")).toBe(SECRET);
    const hookInputs = readFileSync(path.join(folder, "after-tool.jsonl"), "utf8");
    expect(hookInputs).toContain("{{secret:token}}");
    const forms = [SECRET, Buffer.from(SECRET).toString("base64")];
    const denial = hookEvents(events).find((data) => data.outcome === "denied");
    expect(denial?.message).toBe("[secret:token]");
    const [, , third] = requestsOf("secret");
    const seenByModel = toolMessages(third).join("\n");
    expect(seenByModel).toContain("[secret:token]");
    for (const text of [hookInputs, JSON.stringify(events), seenByModel]) {
      for (const form of forms) expect(text).not.toContain(form);
    }
  }, 90_000);
});

describe("capability modes", () => {
  it("read-only offers only reading tools, and nothing can write in its workdir", async () => {
    scripts["read"] = [
      toolCallReply({ name: "write_file", arguments: { path: "w.txt", content: "w" } }),
      toolCallReply({ name: "list_dir", arguments: { path: "." } }),
      textReply("read only"),
    ];
    const { record, events } = await runToEnd("reader", "read");
    expect(record).toMatchObject({ status: "completed", result: "read only" });
    const [first] = requestsOf("read");
    expect(first?.body?.tools?.map((tool) => tool.function.name)).toEqual(["read_file", "list_dir"]);
    const observations = events.flatMap((event) => (event.type === "observation" ? [event.data] : []));
    expect(observations[0]).toMatchObject({ tool: "write_file", ok: false });
    expect(observations[1]).toMatchObject({ tool: "list_dir", ok: true });
    expect(existsSync(path.join(workdir("reader"), "w.txt"))).toBe(false);
    // Its hook runs in its read-only sandbox: `touch` fails.
    expect(hookEvents(events)).toContainEqual(
      expect.objectContaining({ hook: "before_tool", tool: "list_dir", outcome: "failed" }),
    );
    expect(existsSync(path.join(workdir("reader"), "hook-wrote.txt"))).toBe(false);
  }, 90_000);

  it("no-tools offers no tool at all", async () => {
    scripts["quiet"] = [textReply("nothing to call")];
    const { record } = await runToEnd("silent", "quiet");
    expect(record.status).toBe("completed");
    const [first] = requestsOf("quiet");
    expect(first?.body?.tools ?? []).toEqual([]);
  }, 90_000);

  it("GET /agents/:id shows the capabilities, the narrowed tools and sandbox, and the resolved hooks", async () => {
    const reader = (await scripted.daemon.request("GET", "/agents/reader")).body as {
      warnings: string[];
      definition: Record<string, unknown>;
    };
    expect(reader.definition).toMatchObject({
      capabilities: "read-only",
      tools: ["read_file", "list_dir"],
      sandbox_mode: "read-only",
    });
    expect(reader.warnings.join("\n")).toContain("capabilities: read-only removes write_file, shell");
    const watched = (await scripted.daemon.request("GET", "/agents/watched")).body as {
      definition: Record<string, unknown>;
    };
    expect(watched.definition).toMatchObject({
      capabilities: "full",
      sandbox_mode: "workspace-write",
      hooks: {
        before_tool: [],
        after_tool: [
          { command: "cat > after-tool.json", timeout_ms: 30_000, source: "agent" },
          {
            command: "touch not-for-write-file.txt",
            timeout_ms: 30_000,
            source: "agent",
            tools: ["shell", "read_*"],
          },
        ],
        on_run_end: [
          { command: "true", timeout_ms: 30_000, source: "config" },
          { command: "cat > run-end.json", timeout_ms: 30_000, source: "agent" },
        ],
      },
    });
  });
});
