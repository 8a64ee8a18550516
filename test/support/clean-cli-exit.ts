import type { CliExit } from "../../src/workers/cli/run-cli-process.js";

/** A CLI process that ended by itself with exit code 0 and said nothing on stderr. */
export const CLEAN_CLI_EXIT: CliExit = {
  failed: false,
  ending: undefined,
  exitCode: 0,
  signal: undefined,
  spawnErrorCode: undefined,
  message: "",
  stderrTail: "",
  durationMilliseconds: 10,
};
