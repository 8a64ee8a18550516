import type { Command } from "commander";
import { type ClientCommandIo, clientOf, processIo } from "../daemon-client.js";
import { DecisionResponseSchema } from "./deny.js";

/** `agentd approve <id> [--for-run]`: lets a waiting tool call run. */
export function registerApproveCommand(program: Command, io: ClientCommandIo = processIo): void {
  program
    .command("approve <id>")
    .description("approve a pending tool call")
    .option("--for-run", "also approve this tool for the rest of the run")
    .action(async (id: string, options: { forRun?: boolean }, command: Command) => {
      const { client, json } = clientOf(command, io);
      const scope = options.forRun ? "run" : "once";
      const answer = await client.post(
        `/approvals/${encodeURIComponent(id)}`,
        { decision: "approve", scope },
        DecisionResponseSchema,
      );
      io.out(
        json ? JSON.stringify(answer) : `approved ${id}${scope === "run" ? " for the rest of the run" : ""}`,
      );
    });
}
