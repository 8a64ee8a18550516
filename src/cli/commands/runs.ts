import type { Command } from "commander";
import { z } from "zod";
import { AgentdError } from "../../errors/agentd-error.js";
import { RunRecordSchema } from "../../runs/run-record-schema.js";
import { RunStatusSchema } from "../../run-vocabulary/run-status.js";
import { type ClientCommandIo, clientOf, processIo } from "../daemon-client.js";
import { formatRunsTable } from "./runs-table.js";

const RunListSchema = z.object({ runs: z.array(RunRecordSchema) });

interface RunsOptions {
  agent?: string;
  status?: string;
}

/** `agentd runs [--agent a] [--status s]`: the daemon's runs. */
export function registerRunsCommand(program: Command, io: ClientCommandIo = processIo): void {
  program
    .command("runs")
    .description("list the running daemon's runs")
    .option("--agent <agent>", "only runs of this agent")
    .option("--status <status>", `only runs with this status (${RunStatusSchema.options.join(", ")})`)
    .action(async (options: RunsOptions, command: Command) => {
      const { client, json } = clientOf(command, io);
      const query = new URLSearchParams();
      if (options.agent !== undefined) query.set("agent", options.agent);
      if (options.status !== undefined) {
        const status = RunStatusSchema.safeParse(options.status);
        if (!status.success) {
          throw new AgentdError("USAGE", `--status must be one of ${RunStatusSchema.options.join(", ")}`);
        }
        query.set("status", status.data);
      }
      const { runs } = await client.get(`/runs${query.size > 0 ? `?${query}` : ""}`, RunListSchema);
      if (json) for (const run of runs) io.out(JSON.stringify(run));
      else if (runs.length === 0) io.out("no runs");
      else for (const line of formatRunsTable(runs)) io.out(line);
    });
}
