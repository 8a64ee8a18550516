import { stripVTControlCharacters } from "node:util";
import { readFile, writeFile } from "node:fs/promises";
import path from "node:path";
import { beforeEach, describe, expect, it } from "vitest";
import { runAgentCommand } from "../../src/cli/commands/run.js";
import { textReply, toolCallReply } from "../support/scripted-llm-server.js";
import { captureRunIo, useRunProject } from "./run-project.js";

/** What the status line writes before each redraw: back to the start of the line, clear it. */
const CLEAR_LINE = "\r\u001b[2K";

// Log lines at debug: the point is where they go.
const project = useRunProject({ logLevel: "debug" });
beforeEach(async () => {
  await writeFile(
    path.join(project.directory, "agents", "hello.md"),
    "---\ndescription: Says hello\ntask: Say hello\ntools: [read_file]\npermissions: { allow: [read_file] }\n---\nYou greet people.\n",
  );
});

const terminal = (options: { live: boolean; color: boolean }) => captureRunIo(options);

const run = (extra: { verbose?: boolean } = {}) => ({
  agent: "hello",
  config: "config.yaml",
  cwd: project.directory,
  ...extra,
});

describe("agentd run on a terminal", () => {
  it("keeps a status line with a spinner and the elapsed time while the model answers", async () => {
    project.server.enqueue(textReply("Hello!", { delayBeforeFirstChunkMs: 400 }));
    const { io, output } = terminal({ live: true, color: true });
    expect(await runAgentCommand(run(), io)).toBe(0);
    expect(output.stdout).toBe("Hello!\n");
    expect(output.stderr).toContain(`${CLEAR_LINE}\u001b[36m⠋\u001b[39m waiting for the model · 0.0 s`);
    expect(stripVTControlCharacters(output.stderr)).toMatch(/[⠙⠹⠸⠼⠴⠦⠧⠇⠏] waiting for the model · 0\.[1-9] s/);
    // The status line is gone before the summary: the last thing on the terminal is the outcome.
    const afterLastClear = output.stderr.slice(output.stderr.lastIndexOf(CLEAR_LINE) + CLEAR_LINE.length);
    expect(afterLastClear).not.toContain("waiting for the model");
    expect(output.stderr).toMatch(/completed in [\d.]+ s/);
  });

  it("writes plain lines without any escape code when stderr is not a terminal", async () => {
    project.server.enqueue(textReply("Hello!", { delayBeforeFirstChunkMs: 200 }));
    const { io, output } = terminal({ live: false, color: false });
    expect(await runAgentCommand(run(), io)).toBe(0);
    expect(output.stderr).toMatch(/status +running/);
    expect(output.stderr).not.toContain("\u001b");
    expect(output.stderr).not.toContain("\r");
  });

  it("sends log lines to data_dir/logs, or to stderr with --verbose", async () => {
    // A read of a missing file: the tool executor logs a warning ("tool failed").
    const failingRead = () => toolCallReply([{ name: "read_file", arguments: { path: "missing.txt" } }]);
    project.server.enqueue(failingRead(), textReply("Hello!"), failingRead(), textReply("Hello again!"));
    const quiet = terminal({ live: false, color: false });
    expect(await runAgentCommand(run(), quiet.io)).toBe(0);
    expect(quiet.output.stderr).not.toContain('"level"');
    const logFile = path.join(project.directory, "data", "logs", "agentd-run.log");
    const logged = await readFile(logFile, "utf8");
    expect(logged).toContain('"level"');

    const verbose = terminal({ live: true, color: false });
    expect(await runAgentCommand(run({ verbose: true }), verbose.io)).toBe(0);
    // Log lines are written to the process's stderr by pino; the progress view drew no status line.
    expect(verbose.output.stderr).not.toContain("\r");
    expect(await readFile(logFile, "utf8")).toBe(logged);
  });
});
