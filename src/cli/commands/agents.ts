import path from "node:path";
import type { Command } from "commander";
import type { Config } from "../../config/config-schema.js";
import { loadConfig } from "../../config/load-config.js";
import type { AgentStatus } from "../../definitions/definition-snapshot.js";
import { loadDefinitions } from "../../definitions/load-definitions.js";
import { EXIT_OK, type GlobalOptions } from "../output.js";

/** One line of `agentd agents`. */
export interface AgentListing {
  id: string;
  name: string;
  valid: boolean;
  enabled: boolean | null;
  worker: "llm" | "cli" | null;
  /** The cron expression, with ` (timezone)` when one is set; null when the agent runs on demand. */
  schedule: string | null;
  description: string | null;
  file: string;
  errors: Array<Record<string, unknown>>;
}

/**
 * Lists the agents by reading the folders (no daemon needed). An invalid agent is listed with
 * its errors and whatever its file says; `--json` prints one object per agent and line.
 */
export async function listAgentsOffline(config: Config): Promise<AgentListing[]> {
  const snapshot = await loadDefinitions(config);
  return snapshot.agents.map(toListing);
}

export function registerAgentsCommand(program: Command): void {
  program
    .command("agents")
    .description("list the agents: id, name, valid, worker, schedule and description")
    .action(async (_options: unknown, command: Command) => {
      const globals = command.optsWithGlobals<GlobalOptions>();
      const { config } = loadConfig({ file: globals.config });
      const listings = await listAgentsOffline(config);
      process.stdout.write(formatAgents(listings, Boolean(globals.json), process.cwd()));
      process.exitCode = EXIT_OK;
    });
}

/** The text `agentd agents` prints: a table, or one JSON object per line. */
export function formatAgents(listings: readonly AgentListing[], json: boolean, cwd: string): string {
  if (json) return listings.map((listing) => `${JSON.stringify(listing)}\n`).join("");
  if (listings.length === 0) return "no agents: add a Markdown file to the agents folder\n";
  const rows = listings.map((listing) => [
    listing.id,
    listing.name,
    listing.valid
      ? listing.enabled === false
        ? "disabled"
        : "valid"
      : `invalid (${path.relative(cwd, listing.file)})`,
    listing.worker ?? "-",
    listing.schedule ?? "on demand",
    listing.description ?? "-",
  ]);
  const header = ["ID", "NAME", "STATUS", "WORKER", "SCHEDULE", "DESCRIPTION"];
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
    worker: frontmatter?.worker ?? null,
    schedule: schedule ? `${schedule.cron}${schedule.timezone ? ` (${schedule.timezone})` : ""}` : null,
    description: status.definition?.description ?? null,
    file: status.file,
    errors: status.errors.map((error) => error.toJSON()),
  };
}
