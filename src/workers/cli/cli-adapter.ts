import type { CliTranscript } from "./cli-transcript.js";
import type { CliRules } from "./cli-rules.js";

/** What a CLI run is asked to do: the inputs every adapter's launch builder needs. */
export interface CliInvocation {
  task: string;
  /** The system prompt agentd assembled for the agent (instructions and preset sections). */
  systemPrompt: string;
  /** The CLI's model: the agent's `cli.model`, else the adapter's default (none for config tools). */
  model: string | undefined;
  /** Absolute working directory. */
  workdir: string;
  /** This run's private folder (mode 0700): the CLI's TMPDIR and the home of files agentd writes for it. */
  runDirectory: string;
  /** The agent's tools, permissions and limits, as the adapter translates them. */
  rules: CliRules;
  /** True when agentd's own sandbox already contains the child: a CLI's own sandbox may stand down. */
  outerSandbox: boolean;
  /** The environment the child gets from config `cli_tools.<tool>.env` (the user's config folders). */
  configuredEnvironment: Record<string, string>;
  /** Config `cli_tools.<tool>.args`: the tool's default arguments, before the agent's. */
  configArguments: string[];
  /** The agent's `cli.args`, appended after the adapter's own arguments. */
  extraArguments: string[];
}

/** How to start the CLI for one run. */
export interface CliLaunch {
  arguments: string[];
  /** Added to the configured environment (a user-configured value wins only where the adapter says so). */
  environment: Record<string, string>;
  /** Files agentd writes before the start: absolute path (inside `runDirectory`) → content. */
  files: Record<string, string>;
}

/**
 * What a line of stdout meant for the idle watchdog: `progress` (model text, a tool event, the
 * final line) resets it; `noise` (a retry or reconnect notice, an unreadable line) does not.
 */
export type LineVerdict = "progress" | "noise";

/** Reads one line of the tool's stdout into the transcript. Never throws on bad input. */
export type CliLineParser = (line: string, transcript: CliTranscript) => LineVerdict;

/** How far an adapter carries each of the agent's rules; what it does not is a validation warning. */
export interface CliRuleSupport {
  /** `tools` restricts the CLI's own tools. */
  tools: boolean;
  /** `permissions` allow/deny become the CLI's own allow and deny rules. */
  permissions: boolean;
  /** `limits.max_iterations` becomes the CLI's turn limit. */
  maxIterations: boolean;
  /** The CLI reports its cost (else agentd prices its tokens with `llm.prices`). */
  reportsCost: boolean;
}

/**
 * How to drive one CLI tool headless: the command, its launch for a task (arguments, environment,
 * files), and the parser of its structured output.
 */
export interface CliAdapter {
  /** The tool's name as agents write it in `cli.tool`: "claude", "gemini", "codex", or a config name. */
  tool: string;
  /** Executable name or path. */
  command: string;
  /** The model used when the agent sets no `cli.model`. */
  defaultModel: string | undefined;
  /** Config `cli_tools.<tool>.env`: added to the daemon's environment for the child. */
  environment: Record<string, string>;
  /** Config `cli_tools.<tool>.args`. */
  configArguments: string[];
  prepare(invocation: CliInvocation): CliLaunch;
  /**
   * True for structured output with a final line (`result`, `turn.completed`): exit 0 without it is
   * "no result". False for plain text, where stdout itself is the answer.
   */
  hasFinalLine: boolean;
  ruleSupport: CliRuleSupport;
  /** A parser for one run's stdout (parsers may keep state across lines). */
  createLineParser(): CliLineParser;
  /**
   * Failure kind implied by an exit code, for tools that document their codes (Gemini CLI).
   * Structured output wins over this.
   */
  exitCodeHint?(exitCode: number): { kind: "auth" | "rate_limit" | "crash"; message: string } | undefined;
}
