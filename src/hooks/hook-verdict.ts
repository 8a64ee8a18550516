import type { ShellCommandResult } from "../tools/builtin/run-shell-command.js";
import type { HookPoint } from "../config/hook-settings.js";

/** Bytes of a hook's stderr kept for a denial's reason or a failure's message. */
export const HOOK_MESSAGE_BYTES = 2_048;

/** How one hook ended: `denied` only at `before_tool` (exit code 2). */
export type HookVerdict =
  | { outcome: "ok"; exitCode: number }
  | { outcome: "denied"; exitCode: 2; reason: string }
  | { outcome: "failed"; exitCode?: number; message: string };

/**
 * Classifies a hook's process the way Claude Code does: exit 0 is success, exit 2 at `before_tool`
 * denies the call with stderr as the reason, anything else (another exit code, a signal, the
 * timeout, a hook that could not start) is a failure, which never denies and never ends the run.
 */
export function hookVerdict(
  point: HookPoint,
  result: ShellCommandResult,
  timeoutMilliseconds: number,
  redactPiece: (text: string, cutAt: "end" | "start") => string,
): HookVerdict {
  const stderr = result.stderr.text(HOOK_MESSAGE_BYTES, redactPiece).trim();
  const said = stderr === "" ? "" : `: ${stderr}`;
  if (result.spawnError !== undefined) {
    return { outcome: "failed", message: `the hook could not be started: ${result.spawnError}` };
  }
  if (result.ending?.kind === "deadline") {
    const seconds = Math.round(timeoutMilliseconds / 100) / 10;
    return { outcome: "failed", message: `timed out after ${seconds} s and was killed${said}` };
  }
  if (result.exitCode === undefined) {
    return { outcome: "failed", message: `killed by ${result.signalName ?? "a signal"}${said}` };
  }
  if (result.exitCode === 0) return { outcome: "ok", exitCode: 0 };
  if (result.exitCode === 2 && point === "before_tool") {
    return { outcome: "denied", exitCode: 2, reason: stderr === "" ? "no reason given" : stderr };
  }
  const note = result.exitCode === 2 ? " (exit code 2 denies only at before_tool)" : "";
  return {
    outcome: "failed",
    exitCode: result.exitCode,
    message: `exit code ${result.exitCode}${note}${said}`,
  };
}
