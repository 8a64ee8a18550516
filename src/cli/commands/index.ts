import type { Command } from "commander";
import { registerApprovalsCommand } from "./approvals.js";
import { registerAnswerCommand } from "./answer.js";
import { registerApproveCommand } from "./approve.js";
import { registerQuestionsCommand } from "./questions.js";
import { registerDenyCommand } from "./deny.js";
import { registerEventsCommand } from "./events.js";
import { registerRunsCommand } from "./runs.js";
import { registerStopCommand } from "./stop.js";
import { registerStartCommand } from "./start.js";
import { registerValidateCommand } from "./validate.js";
import { registerAgentsCommand } from "./agents.js";
import { registerRunCommand } from "./run.js";
import { registerSecretsCommand } from "./secrets.js";
import { registerTokenCommand } from "./token.js";

/** Every `agentd` subcommand, registered on the root program. One file per command. */
export function registerCommands(program: Command): void {
  void program;
  registerStartCommand(program);
  registerEventsCommand(program);
  registerRunsCommand(program);
  registerStopCommand(program);
  registerApprovalsCommand(program);
  registerApproveCommand(program);
  registerDenyCommand(program);
  registerQuestionsCommand(program);
  registerAnswerCommand(program);
  registerValidateCommand(program);
  registerAgentsCommand(program);
  registerRunCommand(program);
  registerSecretsCommand(program);
  registerTokenCommand(program);
}
