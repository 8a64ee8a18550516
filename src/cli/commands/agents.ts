import path from "node:path";
import type { Command } from "commander";
import type { Config } from "../../config/config-schema.js";
import { loadConfig } from "../../config/load-config.js";
import type { AgentStatus } from "../../definitions/definition-snapshot.js";
import { loadDefinitions } from "../../definitions/load-definitions.js";
import { AgentdError } from "../../errors/agentd-error.js";
import { createLogger } from "../../logging/logger.js";
import { openAgentSwitches } from "../../store/open-agent-switches.js";
import { type ClientCommandIo, DaemonClient, processIo } from "../daemon-client.js";
import { EXIT_OK, type GlobalOptions } from "../output.js";
import { type LiveAgent, LiveAgentListSchema } from "./live-agent-schema.js";

/** One line of `agentd agents`. */
export interface AgentListing {
  id: string;
  name: string;
  valid: boolean;
  enabled: boolean | null;
  /** An operator turned it off (`agentd disable`): who and when; null otherwise. */
  switched_off: { by: string; at: string } | null;
  /** "llm" or "cli:<tool>" (the tool only when a daemon answered), null when invalid. */
  worker: string | null;
  /** The cron expression, with ` (timezone)` when one is set; null when the agent runs on demand. */
  schedule: string | null;
  description: string | null;
  /** The agent file; null when listed by a daemon, which does not say. */
  file: string | null;
  errors: Array<Record<string, unknown>>;
  /** Next scheduled fire (ISO time): only a running daemon knows it. */
  next_fire: string | null;
  /** The latest run: only a running daemon knows it. */
  last_run: { id: string; status: string; reason: string | null } | null;
}

/**
 * Lists the agents by reading the folders (no daemon needed). An invalid agent is listed with
 * its errors and whatever its file says; `--json` prints one object per agent and line.
 */
export async function listAgentsOffline(config: Config): Promise<AgentListing[]> {
  const snapshot = await loadDefinitions(config);
  // Read only: a switches file from before a cluster is the daemon's to move into the database.
  const switches = await openAgentSwitches(config, createLogger({ level: "silent", pretty: false }), {
    importFile: false,
  });
  try {
    return snapshot.agents.map((status) => ({
      ...toListing(status),
      switched_off: switches.disabled(status.id) ?? null,
    }));
  } finally {
    await switches.close();
  }
}

/**
 * The running daemon's view of the agents, with next fire times and last runs; undefined when the
 * daemon watches another agents folder than `agentsDirectory` (another project's daemon).
 */
export async function listAgentsLive(
  client: DaemonClient,
  agentsDirectory: string,
): Promise<AgentListing[] | undefined> {
  const { agents, agents_dir: served } = await client.get("/agents", LiveAgentListSchema);
  if (served !== undefined && path.resolve(served) !== path.resolve(agentsDirectory)) return undefined;
  return agents.map(fromDaemon);
}

/**
 * `agentd agents`: asks the running daemon (next fires, last runs); when none answers, reads the
 * folders and says so on stderr. `--offline` skips the daemon.
 */
export function registerAgentsCommand(program: Command, io: ClientCommandIo = processIo): void {
  program
    .command("agents")
    .description("list the agents: id, name, status, worker, schedule, next fire, last run")
    .option("--offline", "read the agent files instead of asking the running daemon")
    .action(async (options: { offline?: boolean }, command: Command) => {
      const globals = command.optsWithGlobals<GlobalOptions>();
      const json = Boolean(globals.json);
      const { config } = loadConfig({ file: globals.config, environment: io.environment });
      let listings = options.offline ? undefined : await tryDaemon(globals.config, config.agents_dir, io);
      listings ??= await listAgentsOffline(config);
      for (const line of formatAgents(listings, json, process.cwd()).trimEnd().split("\n")) io.out(line);
      process.exitCode = EXIT_OK;
    });
}

/** The daemon's listing, or undefined (with a note on stderr) when no daemon of this project answers. */
async function tryDaemon(
  configFile: string | undefined,
  agentsDirectory: string,
  io: ClientCommandIo,
): Promise<AgentListing[] | undefined> {
  const client = DaemonClient.fromConfig(configFile, io.environment);
  const fromFiles = "listing from the agent files (no next fires or last runs)";
  try {
    const listings = await listAgentsLive(client, agentsDirectory);
    if (!listings) io.err(`the daemon at ${client.baseUrl} serves another agents folder: ${fromFiles}`);
    return listings;
  } catch (error) {
    // A wrong token is the user's to fix; anything else (no daemon, not agentd) falls back.
    if (AgentdError.is(error, "UNAUTHORIZED")) throw error;
    io.err(`no agentd daemon at ${client.baseUrl}: ${fromFiles}`);
    return undefined;
  }
}

/** The text `agentd agents` prints: a table, or one JSON object per line. */
export function formatAgents(listings: readonly AgentListing[], json: boolean, cwd: string): string {
  if (json) return listings.map((listing) => `${JSON.stringify(listing)}\n`).join("");
  if (listings.length === 0) return "no agents: add a Markdown file to the agents folder\n";
  // Only a daemon's listing has next fires and last runs to show.
  const live = listings.some((listing) => listing.file === null);
  const rows = listings.map((listing) => [
    listing.id,
    listing.name,
    listing.valid
      ? listing.switched_off
        ? `disabled by ${listing.switched_off.by}`
        : listing.enabled === false
          ? "disabled (file)"
          : "valid"
      : listing.file === null
        ? "invalid"
        : `invalid (${path.relative(cwd, listing.file)})`,
    listing.worker ?? "-",
    listing.schedule ?? "on demand",
    ...(live ? [listing.next_fire ?? "-", lastRunText(listing)] : []),
    listing.description ?? "-",
  ]);
  const header = [
    "ID",
    "NAME",
    "STATUS",
    "WORKER",
    "SCHEDULE",
    ...(live ? ["NEXT FIRE", "LAST RUN"] : []),
    "DESCRIPTION",
  ];
  const widths = header.map((title, column) =>
    Math.max(title.length, ...rows.map((row) => (row[column] ?? "").length)),
  );
  const line = (cells: string[]) =>
    cells
      .map((cell, column) => (column === cells.length - 1 ? cell : cell.padEnd(widths[column] ?? 0)))
      .join("  ");
  return `${[header, ...rows].map(line).join("\n")}\n`;
}

function toListing(status: AgentStatus): AgentListing {
  // An invalid file shows its last valid definition when there is one (only in a live registry).
  const frontmatter = status.definition?.frontmatter;
  const schedule = frontmatter?.schedule;
  return {
    id: status.id,
    name: status.definition?.name ?? status.id,
    valid: status.valid,
    enabled: frontmatter?.enabled ?? null,
    switched_off: null,
    worker: frontmatter?.worker ?? null,
    schedule: schedule ? `${schedule.cron}${schedule.timezone ? ` (${schedule.timezone})` : ""}` : null,
    description: status.definition?.description ?? null,
    file: status.file,
    errors: status.errors.map((error) => error.toJSON()),
    next_fire: null,
    last_run: null,
  };
}

function fromDaemon(agent: LiveAgent): AgentListing {
  const schedule = agent.schedule;
  return {
    id: agent.id,
    name: agent.name,
    valid: agent.valid,
    enabled: agent.enabled,
    switched_off: agent.switched_off ?? null,
    worker: agent.valid ? agent.worker : null,
    schedule: schedule ? `${schedule.cron}${schedule.timezone ? ` (${schedule.timezone})` : ""}` : null,
    description: agent.description === "" ? null : agent.description,
    file: null,
    errors: agent.errors.map((message) => ({ message })),
    next_fire: agent.next_fire,
    last_run: agent.last_run
      ? { id: agent.last_run.id, status: agent.last_run.status, reason: agent.last_run.reason }
      : null,
  };
}

function lastRunText(listing: AgentListing): string {
  const run = listing.last_run;
  if (!run) return "-";
  return `${run.status}${run.reason ? ` (${run.reason})` : ""} ${run.id}`;
}
