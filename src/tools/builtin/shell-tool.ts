import { z } from "zod";
import { ensureWorkdir } from "../workdir/confine-path.js";
import { withDeadline } from "../../run-vocabulary/abort-ending.js";
import { type ToolOutput, defineTool } from "../tool-definition.js";
import { type ShellCommandResult, runShellCommand } from "./run-shell-command.js";
import { referenceSecrets } from "./shell-secret-references.js";
import { loadBashParser } from "../../permissions/shell-parser.js";

const ShellArguments = z.strictObject({
  command: z
    .string()
    .min(1)
    .describe("A bash command line, run with `bash -c` in the working directory. stdin is empty."),
  timeout_seconds: z
    .number()
    .positive()
    .optional()
    .describe("Seconds before the command is killed (capped by the configured shell timeout)."),
});

/** Secret values for the child's environment, attached by `substitute`; JSON can never carry a symbol. */
const SECRET_ENVIRONMENT = Symbol("shell secret environment");

type ShellCall = z.infer<typeof ShellArguments> & { [SECRET_ENVIRONMENT]?: Record<string, string> };

/** `shell`: one command line through bash in the workdir; the whole process tree ends with the call. */
export const shellTool = defineTool({
  name: "shell",
  description:
    "Run a shell command (bash) in the working directory and get its exit code, stdout and stderr. " +
    "Non-interactive: stdin is empty. Long output is cut; the command is killed at its timeout.",
  schema: ShellArguments,
  subject: (value) => ({ kind: "shell", command: value.command }),
  // Its permission check and secret references read the command with the bash parser.
  load: loadBashParser,
  // Values travel as environment variables: never parsed as shell syntax.
  substitute: (value, secretValue): ShellCall => {
    const { command, environment } = referenceSecrets(value.command, secretValue);
    return { ...value, command, [SECRET_ENVIRONMENT]: environment };
  },
  run: async (value: ShellCall, context) => {
    const limit = context.settings.shell_timeout;
    const timeoutMilliseconds = Math.min(limit, (value.timeout_seconds ?? Infinity) * 1_000);
    const result = await runShellCommand({
      command: value.command,
      workdir: ensureWorkdir(context.workdir),
      environment: value[SECRET_ENVIRONMENT] ?? {},
      sandbox: context.sandbox,
      maxOutputBytes: context.settings.max_output_bytes,
      signal: withDeadline(context.signal, timeoutMilliseconds),
    });
    // The run ended (stop, shutdown, its own timeout): the run reports that, not this call.
    context.signal.throwIfAborted();
    return describeResult(result, timeoutMilliseconds, context.settings.max_output_bytes, (text, cutAt) =>
      context.redactPiece(text, cutAt),
    );
  },
});

/** Bytes set aside for the status line and the stream headings. */
const HEADINGS_BYTES = 200;

function describeResult(
  result: ShellCommandResult,
  timeoutMilliseconds: number,
  maxOutputBytes: number,
  redactPiece: (text: string, cutAt: "end" | "start") => string,
): ToolOutput {
  if (result.spawnError !== undefined) {
    return { ok: false, code: "TOOL_FAILED", output: `the shell could not be started: ${result.spawnError}` };
  }
  const { stdout, stderr } = result;
  // stderr keeps at least a quarter of the budget: the error of a noisy command stays visible.
  const room = Math.max(0, maxOutputBytes - HEADINGS_BYTES);
  const stderrBudget = Math.min(stderr.total, Math.max(Math.floor(room / 4), room - stdout.total));
  const stdoutBudget = room - stderrBudget;
  const truncated = stdout.total > stdoutBudget || stderr.total > stderrBudget;
  const streams = `stdout:\n${stdout.text(stdoutBudget, redactPiece)}\nstderr:\n${stderr.text(stderrBudget, redactPiece)}`;
  const extra = truncated ? { truncated } : {};
  if (result.ending?.kind === "deadline") {
    const seconds = Math.round(timeoutMilliseconds / 100) / 10;
    const status = `timed out after ${seconds} s: the command and everything it started were killed`;
    return { ok: false, code: "TOOL_TIMEOUT", output: `${status}\n${streams}`, ...extra };
  }
  const status =
    result.exitCode === undefined
      ? `killed by ${result.signalName ?? "a signal"}`
      : `exit code ${result.exitCode}`;
  const ok = result.exitCode === 0;
  return { ok, ...(ok ? {} : { code: "TOOL_FAILED" }), output: `${status}\n${streams}`, ...extra };
}
