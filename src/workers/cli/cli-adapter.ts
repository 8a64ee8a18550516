import type { CliTranscript } from "./cli-transcript.js";

/** What a CLI run is asked to do: the inputs every adapter's argument builder needs. */
export interface CliInvocation {
  task: string;
  /** The agent's `model`, when it sets one; the flag is left out otherwise. */
  model: string | undefined;
  /** Absolute working directory. */
  workdir: string;
  /** The agent's `cli.args`, appended after the adapter's own arguments. */
  extraArguments: string[];
}

/** Reads one line of the tool's stdout into the transcript. Never throws on bad input. */
export type CliLineParser = (line: string, transcript: CliTranscript) => void;

/**
 * How to drive one CLI tool headless: the command, its arguments for a task, the environment that
 * shortens its internal retries, and the parser of its structured output.
 */
export interface CliAdapter {
  /** The tool's name as agents write it in `cli.tool`: "claude", "gemini", "codex", or a config name. */
  tool: string;
  /** Executable name or path. */
  command: string;
  /** Added to the daemon's environment for the child. */
  environment: Record<string, string>;
  buildArguments(invocation: CliInvocation): string[];
  /**
   * True for structured output with a final line (`result`, `turn.completed`): exit 0 without it is
   * "no result". False for plain text, where stdout itself is the answer.
   */
  hasFinalLine: boolean;
  /** A parser for one run's stdout (parsers may keep state across lines). */
  createLineParser(): CliLineParser;
  /**
   * Failure kind implied by an exit code, for tools that document their codes (Gemini CLI).
   * Structured output wins over this.
   */
  exitCodeHint?(exitCode: number): { kind: "auth" | "rate_limit" | "crash"; message: string } | undefined;
}
