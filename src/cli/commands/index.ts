import type { Command } from "commander";
import { registerStartCommand } from "./start.js";
import { registerValidateCommand } from "./validate.js";
import { registerAgentsCommand } from "./agents.js";

/** Every `agentd` subcommand, registered on the root program. One file per command. */
export function registerCommands(program: Command): void {
  void program;
  registerStartCommand(program);
  registerValidateCommand(program);
  registerAgentsCommand(program);
}
