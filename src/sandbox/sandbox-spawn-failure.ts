import { constants } from "node:os";

/**
 * What bubblewrap (or the sandbox's network bridge) prints when the program it should start cannot
 * be started: inside the sandbox that is an exit code and a line on stderr, not a spawn error.
 */
const SPAWN_FAILURE =
  /^(?:bwrap|agentd sandbox): execvp [^\n]*: (No such file or directory|Permission denied)$/m;

/** `ENOENT` / `EACCES` when the sandbox said the program could not be started, else undefined. */
export function sandboxSpawnFailure(stderr: string): "ENOENT" | "EACCES" | undefined {
  const reason = SPAWN_FAILURE.exec(stderr)?.[1];
  if (reason === undefined) return undefined;
  return reason === "Permission denied" ? "EACCES" : "ENOENT";
}

/**
 * The signal that ended a sandboxed program: bubblewrap exits with 128 + the signal's number when
 * its child is killed by one (as shells report it), so execa sees an exit code, not a signal.
 */
export function sandboxExitSignal(exitCode: number | undefined): NodeJS.Signals | undefined {
  if (exitCode === undefined || exitCode <= 128 || exitCode > 128 + 64) return undefined;
  const number = exitCode - 128;
  const entry = Object.entries(constants.signals).find(([, value]) => value === number);
  return entry?.[0] as NodeJS.Signals | undefined;
}
