import { Command, CommanderError } from "commander";
import { AgentdError } from "../errors/agentd-error.js";
import { registerCommands } from "./commands/index.js";
import { EXIT_USAGE, reportFatal } from "./output.js";

const program = new Command("agentd")
  .description("Run AI agents defined as Markdown files, on a schedule or on demand.")
  .option("--config <file>", "config file (default: ./config.yaml when present, else built-in defaults)")
  .option("--json", "machine-readable output: one JSON object per line")
  .exitOverride()
  .showHelpAfterError();

await registerCommands(program, process.argv);

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
