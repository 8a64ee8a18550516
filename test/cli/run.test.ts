import { readFile, writeFile } from "node:fs/promises";
import path from "node:path";
import { beforeEach, describe, expect, it } from "vitest";
import { runAgentCommand } from "../../src/cli/commands/run.js";
import { localUserName } from "../../src/util/local-user.js";
import { textReply, toolCallReply } from "../support/scripted-llm-server.js";
import { captureRunIo, useRunProject } from "./run-project.js";

const project = useRunProject();
beforeEach(async () => {
  await writeAgent("hello", "description: Says hello\ntask: Say hello", "You greet people.");
});

function writeAgent(id: string, frontmatter: string, body: string): Promise<void> {
  return writeFile(path.join(project.directory, "agents", `${id}.md`), `---\n${frontmatter}\n---\n${body}\n`);
}

const capture = () => captureRunIo();

const options = (agent: string, extra: { task?: string; json?: boolean } = {}) => ({
  agent,
  config: "config.yaml",
  cwd: project.directory,
  ...extra,
});

describe("agentd run", () => {
  it("runs an agent to completion: progress on stderr, the answer on stdout, exit 0", async () => {
    project.server.enqueue(textReply("Hello, world!", { usage: { promptTokens: 20, completionTokens: 5 } }));
    const { io, output } = capture();
    const code = await runAgentCommand(options("hello"), io);
    expect(code).toBe(0);
    expect(output.stdout).toBe("Hello, world!\n");
    expect(output.stderr).toMatch(/status\s+running/);
    expect(output.stderr).toMatch(/completed in [\d.]+ s · 25 tokens/);
    const sent = project.server.chatRequests[0]?.body;
    expect(sent?.model).toBe("scripted");
    expect(sent?.messages[0]).toEqual({
      role: "system",
      content: expect.stringContaining("You greet people."),
    });
    expect(sent?.messages[1]).toEqual({ role: "user", content: "Say hello" });
    expect(project.server.chatRequests[0]?.headers.authorization).toBe("Bearer test-key");
  });

  it("prints events as JSON lines, then the run record, with --json", async () => {
    project.server.enqueue(toolCallReply({ name: "read_file", arguments: { path: "x" } }), textReply("done"));
    const { io, output } = capture();
    const code = await runAgentCommand(options("hello", { task: "Do it", json: true }), io);
    expect(code).toBe(0);
    const lines = output.stdout
      .trim()
      .split("\n")
      .map((line) => JSON.parse(line) as Record<string, unknown>);
    const record = lines.at(-1);
    expect(record).toMatchObject({
      agent: "hello",
      task: "Do it",
      status: "completed",
      result: "done",
      worker: "llm",
    });
    // The run's start is audited (actor `cli`, the local user) once, beside the run's own events.
    const audits = lines.slice(0, -1).filter((event) => event.type === "audit");
    expect(audits.map((event) => event.data)).toEqual([
      { action: "run.start", actor: { kind: "cli", name: localUserName() } },
    ]);
    const events = lines.slice(0, -1).filter((event) => event.type !== "audit");
    expect(events.map((event) => event.type)).toEqual([
      "status",
      "status",
      "action",
      "observation",
      "result",
      "status",
    ]);
    expect(events.slice(0, 2).map((event) => (event.data as { status?: string }).status)).toEqual([
      "queued",
      "running",
    ]);
    expect(events.every((event) => event.run === record?.id && event.agent === "hello")).toBe(true);
    expect(lines.slice(0, -1).map((event) => event.id)).toEqual([1, 2, 3, 4, 5, 6, 7]);
    // The agent lists no tools: the call is refused, and the refusal is an observation.
    expect(events[3]?.data).toMatchObject({ tool: "read_file", ok: false });
    const toolResult = project.server.chatRequests[1]?.body?.messages.find(
      (message) => message.role === "tool",
    );
    expect(String(toolResult?.content)).toContain("TOOL_NOT_FOUND");
  });

  it("masks a vault value the answer quotes, in the record printed with --json and on stdout", async () => {
    const value = "vault-value-3e91c7";
    await writeFile(
      path.join(project.directory, "config.yaml"),
      `${await readFile(path.join(project.directory, "config.yaml"), "utf8")}\nvault: { backend: env }\n`,
    );
    process.env.AGENTD_SECRET_DEPLOY_KEY = value;
    try {
      project.server.enqueue(textReply(`the key is ${value}`));
      const json = capture();
      expect(await runAgentCommand(options("hello", { json: true }), json.io)).toBe(0);
      project.server.enqueue(textReply(`the key is ${value}`));
      const text = capture();
      expect(await runAgentCommand(options("hello"), text.io)).toBe(0);
      for (const printed of [
        json.output.stdout,
        json.output.stderr,
        text.output.stdout,
        text.output.stderr,
      ]) {
        expect(printed).not.toContain(value);
      }
      expect(JSON.parse(json.output.stdout.trim().split("\n").at(-1) ?? "{}")).toMatchObject({
        result: "the key is [secret:deploy_key]",
      });
      expect(text.output.stdout).toBe("the key is [secret:deploy_key]\n");
    } finally {
      delete process.env.AGENTD_SECRET_DEPLOY_KEY;
    }
  });

  it("exits 1 when the run fails", async () => {
    project.server.enqueue({ type: "completion", text: "x", interrupt: { after: 1, with: "drop" } });
    const { io, output } = capture();
    expect(await runAgentCommand(options("hello"), io)).toBe(1);
    expect(output.stderr).toContain("failed · llm_error");
    expect(output.stdout).toBe("");
  });

  it("exits 2 for an unknown agent, suggesting a close name", async () => {
    const { io, output } = capture();
    expect(await runAgentCommand(options("helo"), io)).toBe(2);
    expect(output.stderr).toContain('no agent "helo"');
    expect(output.stderr).toContain("did you mean hello?");
  });

  it("exits 2 when there is no task to run", async () => {
    await writeAgent("taskless", "description: Needs a task", "Body.");
    const { io, output } = capture();
    expect(await runAgentCommand(options("taskless"), io)).toBe(2);
    expect(output.stderr).toContain("no task given");
  });

  it("exits 1 with the errors of an invalid agent", async () => {
    await writeAgent("broken", "name: No description here", "Body.");
    const { io, output } = capture();
    expect(await runAgentCommand(options("broken", { task: "x" }), io)).toBe(1);
    expect(output.stderr).toContain("broken.md");
    expect(output.stderr).toContain("description");
    expect(project.server.chatRequests).toHaveLength(0);
  });

  it("runs its agent while other agent files are broken: only its own files are read", async () => {
    await writeAgent("broken", "description: [unclosed", "Body.");
    await writeFile(path.join(project.directory, "agents", "Not An Id.md"), "no frontmatter at all\n");
    project.server.enqueue(textReply("Hello anyway"));
    const { io, output } = capture();
    expect(await runAgentCommand(options("hello"), io)).toBe(0);
    expect(output.stdout).toBe("Hello anyway\n");
    expect(output.stderr).not.toContain("broken");
  });

  it("offers agents: as agent__<id> tools, runs the child in data_dir and answers with its result", async () => {
    await writeAgent("lead", "description: Leads\nagents: [helper]", "You delegate.");
    await writeAgent("helper", "description: Lists risks for a plan", "You list risks.");
    project.server.enqueue(
      toolCallReply({ name: "agent__helper", arguments: { task: "list risks" } }),
      textReply("two risks: rain, cost"),
      textReply("The helper found two risks."),
    );
    const { io, output } = capture();
    const code = await runAgentCommand(options("lead", { task: "Plan the picnic", json: true }), io);
    expect(code).toBe(0);
    const lines = output.stdout.trim().split("\n");
    const record = JSON.parse(lines.at(-1) ?? "{}") as { id: string; result: string };
    expect(record.result).toBe("The helper found two risks.");
    const offered = project.server.chatRequests[0]?.body?.tools?.find(
      (tool) => tool.function.name === "agent__helper",
    );
    expect(offered?.function.description).toContain("Lists risks for a plan");
    expect(project.server.chatRequests[1]?.body?.messages.at(-1)).toEqual({
      role: "user",
      content: "list risks",
    });
    const observation = lines
      .map((line) => JSON.parse(line) as { type?: string; data?: { tool?: string; output?: string } })
      .find((event) => event.type === "observation");
    expect(observation?.data).toMatchObject({ tool: "agent__helper", output: "two risks: rain, cost" });
    // The child's record sits in the data folder, linked to its parent.
    const runsDirectory = path.join(project.directory, "data", "runs");
    const index = (await readFile(path.join(runsDirectory, "index", "00000001.jsonl"), "utf8"))
      .trim()
      .split("\n");
    const child = index
      .map((line) => JSON.parse(line) as { run: string; agent: string })
      .find((entry) => entry.agent === "helper");
    const childRecord = JSON.parse(
      await readFile(path.join(runsDirectory, `${child?.run}.json`), "utf8"),
    ) as {
      parent_run?: string;
      status: string;
    };
    expect(childRecord).toMatchObject({ parent_run: record.id, status: "completed" });
  });

  it("stops the run with user_stop on Ctrl-C", async () => {
    project.server.enqueue(textReply("slow ".repeat(400), { chunkSize: 5, delayBetweenChunksMs: 50 }));
    const { io, output, interrupt } = capture();
    const running = runAgentCommand(options("hello", { json: true }), io);
    await project.server.waitForChatRequests(1);
    interrupt();
    expect(await running).toBe(1);
    const record = JSON.parse(output.stdout.trim().split("\n").at(-1) ?? "{}") as Record<string, unknown>;
    expect(record).toMatchObject({ status: "stopped", reason: "user_stop" });
    await expect.poll(() => project.server.chatRequests[0]?.closedByClient).toBe(true);
  });
});
