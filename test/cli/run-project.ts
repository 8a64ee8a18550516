import { afterEach, beforeEach } from "vitest";
import type { RunCommandIo } from "../../src/cli/commands/run.js";
import { startScriptedLlmServer, type ScriptedLlmServer } from "../support/scripted-llm-server.js";
import { createTempProject } from "../support/temp-project.js";

/** A temp project for `agentd run`: a scripted LLM server, an agents folder and a config using both. */
export interface RunProject {
  server: ScriptedLlmServer;
  directory: string;
  close(): Promise<void>;
}

/** The project's model answers once per request (no retries); the run logs nothing unless `logLevel` says. */
async function createRunProject(options: { logLevel?: string } = {}): Promise<RunProject> {
  const server = await startScriptedLlmServer();
  const project = createTempProject({
    config: {
      llm: { base_url: server.url, api_key: "test-key", model: "scripted", retries: { max_attempts: 1 } },
      log: { level: options.logLevel ?? "silent" },
    },
  });
  return {
    server,
    directory: project.root,
    close: async () => {
      await server.close();
      project.remove();
    },
  };
}

/**
 * A fresh run project for each test of the calling file (created in `beforeEach`, closed in
 * `afterEach`): the returned object reads the current test's server and folder.
 */
export function useRunProject(options: { logLevel?: string } = {}): Omit<RunProject, "close"> {
  let current: RunProject | undefined;
  beforeEach(async () => {
    current = await createRunProject(options);
  });
  afterEach(async () => {
    await current?.close();
    current = undefined;
  });
  const now = (): RunProject => {
    if (!current) throw new Error("the run project exists only while a test runs");
    return current;
  };
  return {
    get server() {
      return now().server;
    },
    get directory() {
      return now().directory;
    },
  };
}

/** What `agentd run` writes, as a terminal would show it. */
export interface CapturedRunIo {
  io: RunCommandIo;
  output: { stdout: string; stderr: string };
  /** Plays Ctrl-C: calls the handler the command set, if any. */
  interrupt(): void;
}

/** An `io` for `runAgentCommand` that keeps what it writes; `options` set color, live, input. */
export function captureRunIo(
  options: Partial<Pick<RunCommandIo, "color" | "live" | "approvalInput">> = {},
): CapturedRunIo {
  const output = { stdout: "", stderr: "" };
  let handler: (() => void) | undefined;
  const io: RunCommandIo = {
    stdout: (text) => void (output.stdout += text),
    stderr: (text) => void (output.stderr += text),
    color: false,
    onInterrupt: (next) => {
      handler = next;
      return () => (handler = undefined);
    },
    ...options,
  };
  return { io, output, interrupt: () => handler?.() };
}
