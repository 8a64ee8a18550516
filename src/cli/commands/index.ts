import type { Command } from "commander";
import { requestedCommand } from "../requested-command.js";

type RegisterCommand = (program: Command) => void;

interface CommandEntry {
  /** What `agentd --help` lists: the command's name and arguments, as its module declares them. */
  usage: string;
  description: string;
  /** Imports the command's module; only the command that runs is loaded. */
  load: () => Promise<RegisterCommand>;
}

/**
 * Every `agentd` subcommand, one module each. A start-up imports only the module of the command it
 * runs (the daemon's, with the HTTP server, MCP and execa, costs seconds on a busy machine), so
 * `agentd --help` and an unknown name are answered from the usage and description kept here.
 * test/cli/command-table.test.ts checks that they match what each module registers.
 */
export const COMMANDS: Readonly<Record<string, CommandEntry>> = {
  start: {
    usage: "start",
    description: "run the daemon: schedules, runs, and the HTTP API, until SIGTERM or SIGINT",
    load: async () => (await import("./start.js")).registerStartCommand,
  },
  health: {
    usage: "health",
    description: "check that the daemon of this config answers and that a sandboxed shell call runs",
    load: async () => (await import("./health.js")).registerHealthCommand,
  },
  events: {
    usage: "events <agent>",
    description: "print an agent's events from the running daemon; --follow keeps printing new ones",
    load: async () => (await import("./events.js")).registerEventsCommand,
  },
  runs: {
    usage: "runs",
    description: "list the running daemon's runs",
    load: async () => (await import("./runs.js")).registerRunsCommand,
  },
  stop: {
    usage: "stop <run>",
    description: "stop a run of the running daemon",
    load: async () => (await import("./stop.js")).registerStopCommand,
  },
  approvals: {
    usage: "approvals",
    description: "list tool calls waiting for approval (answer with agentd approve|deny <id>)",
    load: async () => (await import("./approvals.js")).registerApprovalsCommand,
  },
  approve: {
    usage: "approve <id>",
    description: "approve a pending tool call",
    load: async () => (await import("./approve.js")).registerApproveCommand,
  },
  deny: {
    usage: "deny <id>",
    description: "deny a pending tool call",
    load: async () => (await import("./deny.js")).registerDenyCommand,
  },
  questions: {
    usage: "questions",
    description: 'list questions runs wait on (answer with agentd answer <id> "…")',
    load: async () => (await import("./questions.js")).registerQuestionsCommand,
  },
  answer: {
    usage: "answer <id> <answer...>",
    description: "answer a question a run asked (agentd questions lists them)",
    load: async () => (await import("./answer.js")).registerAnswerCommand,
  },
  deliveries: {
    usage: "deliveries",
    description:
      "list deliveries of runs' outcomes (newest first); --status pending|retrying|sent|failed; --targets: the targets and their health",
    load: async () => (await import("./deliveries.js")).registerDeliveriesCommand,
  },
  validate: {
    usage: "validate",
    description: "check the config, every preset and every agent; exit 1 when anything is invalid",
    load: async () => (await import("./validate.js")).registerValidateCommand,
  },
  agents: {
    usage: "agents",
    description: "list the agents: id, name, status, worker, schedule, next fire, last run",
    load: async () => (await import("./agents.js")).registerAgentsCommand,
  },
  enable: {
    usage: "enable <agent>",
    description: "turn an agent agentd disable turned off back on",
    load: async () => (await import("./agent-switch.js")).registerEnableCommand,
  },
  disable: {
    usage: "disable <agent>",
    description:
      "turn an agent off: no scheduled, triggered or API run until agentd enable (its file is untouched)",
    load: async () => (await import("./agent-switch.js")).registerDisableCommand,
  },
  triggers: {
    usage: "triggers",
    description: "list the agents' triggers: webhooks with their route, after and watch triggers",
    load: async () => (await import("./triggers.js")).registerTriggersCommand,
  },
  run: {
    usage: "run <agent> [task]",
    description:
      "run one agent now, in this process, printing its events as they come; exit 0 when it completes",
    load: async () => (await import("./run.js")).registerRunCommand,
  },
  memory: {
    usage: "memory <agent>",
    description: "print an agent's memory; --set - replaces it with stdin (409 if it changed meanwhile)",
    load: async () => (await import("./memory.js")).registerMemoryCommand,
  },
  secrets: {
    usage: "secrets",
    description: "manage the vault's secrets (values from stdin or a hidden prompt, never from argv)",
    load: async () => (await import("./secrets.js")).registerSecretsCommand,
  },
  token: {
    usage: "token",
    description:
      "print the API token (or with --url the browser login URL); create, list and revoke named tokens",
    load: async () => (await import("./token.js")).registerTokenCommand,
  },
  audit: {
    usage: "audit",
    description: "print the audit trail (admin): who started, stopped, approved, answered, changed what",
    load: async () => (await import("./audit.js")).registerAuditCommand,
  },
};

/**
 * Registers the command `argv` names, loading only its module; with no known command (help, a
 * typo) every command is listed from the table, so help and did-you-mean work without loading any.
 */
export async function registerCommands(program: Command, argv: readonly string[]): Promise<void> {
  const name = requestedCommand(argv.slice(2));
  const entry = name === undefined ? undefined : COMMANDS[name];
  if (entry) {
    (await entry.load())(program);
    return;
  }
  for (const listed of Object.values(COMMANDS)) program.command(listed.usage).description(listed.description);
}
