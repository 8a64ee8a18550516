import { existsSync } from "node:fs";
import { mkdir, readFile, writeFile } from "node:fs/promises";
import path from "node:path";
import { PassThrough } from "node:stream";
import { agentd } from "../support/agentd-cli.js";
import { beforeEach, describe, expect, it } from "vitest";
import { runAgentCommand, type RunCommandIo } from "../../src/cli/commands/run.js";
import { textReply, toolCallReply } from "../support/scripted-llm-server.js";
import { captureRunIo, useRunProject } from "./run-project.js";

const QUESTION = "approve? [y]es / [n]o / [a]lways for this run";

const project = useRunProject();
beforeEach(async () => {
  await mkdir(path.join(project.directory, "work"));
  await writeAgent("10m");
});

/** An agent whose write_file calls must be approved. */
function writeAgent(timeout: string, onTimeout = "deny"): Promise<void> {
  const frontmatter = [
    "description: Writes notes",
    "task: Write the notes",
    "workdir: work",
    "tools: [write_file]",
    "permissions: { ask: [write_file] }",
    `approvals: { timeout: ${timeout}, on_timeout: ${onTimeout} }`,
  ].join("\n");
  return writeFile(
    path.join(project.directory, "agents", "writer.md"),
    `---\n${frontmatter}\n---\nYou write notes.\n`,
  );
}

/** A terminal: what the command writes, and an input the test types answers into. */
function terminal(options: { tty: boolean }) {
  const input = new PassThrough();
  const { io, output, interrupt } = captureRunIo(options.tty ? { approvalInput: input } : {});
  const questionsAsked = () => output.stderr.split(QUESTION).length - 1;
  /** Waits until the `count`th question is on screen, then types `answer`. */
  const answer = async (count: number, text: string) => {
    await expect.poll(questionsAsked, { timeout: 10_000, interval: 20 }).toBe(count);
    input.write(`${text}\n`);
  };
  return { io, input, output, answer, questionsAsked, interrupt };
}

const writeCall = (file: string, content: string) =>
  toolCallReply({ name: "write_file", arguments: { path: file, content } });
const run = (io: RunCommandIo) =>
  runAgentCommand({ agent: "writer", config: "config.yaml", cwd: project.directory }, io);
const workFile = (file: string) => path.join(project.directory, "work", file);
const toolMessages = () =>
  project.server.chatRequests.flatMap((request) =>
    (request.body?.messages ?? [])
      .filter((message) => message.role === "tool")
      .map((message) => String(message.content)),
  );

describe("agentd run approvals on a terminal", () => {
  it("asks with the tool and its arguments, and runs the call once approved", async () => {
    project.server.enqueue(writeCall("notes.md", "first note"), textReply("done"));
    const { io, output, answer } = terminal({ tty: true });
    const running = run(io);
    await answer(1, "y");
    expect(await running).toBe(0);
    expect(await readFile(workFile("notes.md"), "utf8")).toBe("first note");
    expect(output.stderr).toMatch(/approval a_[0-9a-f]+: write_file \(.*denied in 10m if unanswered/);
    expect(output.stderr).toContain('"content": "first note"');
    expect(output.stderr).toMatch(/status\s+waiting/);
    expect(output.stderr).toMatch(/approval\s+approved write_file/);
    expect(output.stdout).toBe("done\n");
  });

  it("does not run a denied call, and the model reads why", async () => {
    project.server.enqueue(writeCall("notes.md", "nope"), textReply("gave up"));
    const { io, answer } = terminal({ tty: true });
    const running = run(io);
    await answer(1, "n");
    expect(await running).toBe(0);
    expect(existsSync(workFile("notes.md"))).toBe(false);
    expect(toolMessages().join("\n")).toContain("TOOL_DENIED");
  });

  it("asks once when the answer is always for this run, and again after a plain yes", async () => {
    project.server.enqueue(writeCall("a.md", "A"), writeCall("b.md", "B"), textReply("both written"));
    const { io, answer, questionsAsked } = terminal({ tty: true });
    const running = run(io);
    await answer(1, "a");
    expect(await running).toBe(0);
    expect(questionsAsked()).toBe(1);
    expect(await readFile(workFile("b.md"), "utf8")).toBe("B");

    project.server.enqueue(writeCall("c.md", "C"), writeCall("d.md", "D"), textReply("both written"));
    const second = terminal({ tty: true });
    const again = run(second.io);
    await second.answer(1, "yes");
    await second.answer(2, "y");
    expect(await again).toBe(0);
    expect(await readFile(workFile("d.md"), "utf8")).toBe("D");
  });

  it("asks again after an answer it does not understand", async () => {
    project.server.enqueue(writeCall("notes.md", "x"), textReply("done"));
    const { io, input, output, answer } = terminal({ tty: true });
    const running = run(io);
    await answer(1, "maybe");
    await expect
      .poll(() => output.stderr, { timeout: 10_000 })
      .toContain("please answer y (yes), n (no) or a");
    expect(existsSync(workFile("notes.md"))).toBe(false);
    input.write("y\n");
    expect(await running).toBe(0);
    expect(existsSync(workFile("notes.md"))).toBe(true);
  });

  it("stops the run on Ctrl-C while asking", async () => {
    project.server.enqueue(writeCall("notes.md", "x"), textReply("done"));
    const { io, output, questionsAsked, interrupt } = terminal({ tty: true });
    const running = run(io);
    await expect.poll(questionsAsked, { timeout: 10_000 }).toBe(1);
    interrupt();
    expect(await running).toBe(1);
    expect(output.stderr).toMatch(/stopped · user_stop/);
    expect(existsSync(workFile("notes.md"))).toBe(false);
  });

  it("without a terminal, says so and follows on_timeout deny once the timeout passes", async () => {
    await writeAgent("300ms");
    project.server.enqueue(writeCall("notes.md", "x"), textReply("done anyway"));
    const { io, output, questionsAsked } = terminal({ tty: false });
    expect(await run(io)).toBe(0);
    expect(questionsAsked()).toBe(0);
    expect(output.stderr).toMatch(
      /write_file waits for an answer, but there is no terminal to ask; denied in 300ms/,
    );
    expect(output.stderr).toMatch(/approval\s+expired write_file/);
    expect(existsSync(workFile("notes.md"))).toBe(false);
    expect(toolMessages().join("\n")).toContain("the approval request expired");
  });

  it("without a terminal, follows on_timeout approve once the timeout passes", async () => {
    await writeAgent("300ms", "approve");
    project.server.enqueue(writeCall("notes.md", "approved by waiting"), textReply("done"));
    const { io, output } = terminal({ tty: false });
    expect(await run(io)).toBe(0);
    expect(output.stderr).toContain("approved in 300ms if unanswered");
    expect(await readFile(workFile("notes.md"), "utf8")).toBe("approved by waiting");
  });

  it("keeps a real agentd run process alive while a call waits, until on_timeout decides it", async () => {
    await writeAgent("1s", "approve");
    project.server.enqueue(writeCall("notes.md", "after the wait"), textReply("done"));
    const child = await agentd(["run", "writer", "--config", "config.yaml"], { cwd: project.directory });
    expect(child.stderr).toContain("no terminal to ask; approved in 1s if unanswered");
    expect(child.exitCode).toBe(0);
    expect(child.stdout).toBe("done\n");
    expect(await readFile(workFile("notes.md"), "utf8")).toBe("after the wait");
  }, 40_000);
});
