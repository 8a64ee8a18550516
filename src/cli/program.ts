import { Command, CommanderError } from "commander";
import { AgentdError } from "../errors/agentd-error.js";
import { packageVersion } from "../util/package-version.js";
import { EXIT_USAGE, reportFatal } from "./output.js";

/**
 * Runs the `agentd` command line on `process.argv`: the root options, the commands `register` adds
 * (main.ts adds the one the line names, or all of them for help), and the exit code.
 */
export async function runProgram(register: (program: Command) => void | Promise<void>): Promise<void> {
  const program = new Command("agentd")
    .description("Run AI agents defined as Markdown files, on a schedule or on demand.")
    .option("--config <file>", "config file (default: ./config.yaml when present, else built-in defaults)")
    .option("--json", "machine-readable output: one JSON object per line")
    .version(packageVersion(), "-V, --version", "print agentd's version")
    .exitOverride()
    .showHelpAfterError();
  await register(program);
  try {
    await program.parseAsync(process.argv);
  } catch (error) {
    if (error instanceof CommanderError) {
      process.exitCode = error.exitCode === 0 ? 0 : EXIT_USAGE;
    } else {
      reportFatal(error, Boolean(program.opts().json));
      process.exitCode = AgentdError.is(error, "USAGE") ? EXIT_USAGE : 1;
    }
  }
}
