import { existsSync } from "node:fs";
import { mkdir, readFile, writeFile } from "node:fs/promises";
import path from "node:path";
import { beforeEach, describe, expect, it } from "vitest";
import { runAgentCommand } from "../../src/cli/commands/run.js";
import { textReply, toolCallReply } from "../support/scripted-llm-server.js";
import { captureRunIo, useRunProject } from "../cli/run-project.js";

const project = useRunProject();
beforeEach(async () => {
  await mkdir(path.join(project.directory, "work"));
});

const { io } = captureRunIo();

describe("hooks in agentd run", () => {
  it("denies a call with a before_tool hook and runs on_run_end with the status, as the daemon does", async () => {
    await writeFile(
      path.join(project.directory, "agents", "careful.md"),
      [
        "---",
        "description: Careful writer",
        "workdir: work",
        "tools: [write_file]",
        "permissions: { allow: [write_file] }",
        "hooks:",
        "  before_tool: 'echo read-only day >&2; exit 2'",
        "  on_run_end: 'cat > end.json'",
        "---",
        "Write what you are asked.",
      ].join("\n"),
    );
    project.server.enqueue(
      toolCallReply({ name: "write_file", arguments: { path: "marker.txt", content: "x" } }),
      textReply("did not write"),
    );
    const code = await runAgentCommand(
      { agent: "careful", task: "write it", config: "config.yaml", cwd: project.directory },
      io,
    );
    expect(code).toBe(0);
    const work = path.join(project.directory, "work");
    expect(existsSync(path.join(work, "marker.txt"))).toBe(false);
    const toolMessage = project.server.chatRequests[1]?.body?.messages.find(
      (message) => message.role === "tool",
    );
    expect(String(toolMessage?.content)).toContain("read-only day");
    const end = JSON.parse(await readFile(path.join(work, "end.json"), "utf8"));
    expect(end).toMatchObject({ hook_event_name: "on_run_end", agent: "careful", status: "completed" });
  }, 60_000);
});
