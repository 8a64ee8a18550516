import type { Command } from "commander";
import { z } from "zod";
import { type ClientCommandIo, clientOf, processIo } from "../daemon-client.js";

/** What POST /approvals/:id answers. */
export const DecisionResponseSchema = z.object({
  approval: z.string(),
  decision: z.enum(["approve", "deny"]),
  scope: z.enum(["once", "run"]),
});

/** `agentd deny <id>`: refuses a waiting tool call; the model is told it was denied. */
export function registerDenyCommand(program: Command, io: ClientCommandIo = processIo): void {
  program
    .command("deny <id>")
    .description("deny a pending tool call")
    .action(async (id: string, _options: unknown, command: Command) => {
      const { client, json } = clientOf(command, io);
      const answer = await client.post(
        `/approvals/${encodeURIComponent(id)}`,
        { decision: "deny" },
        DecisionResponseSchema,
      );
      io.out(json ? JSON.stringify(answer) : `denied ${id}`);
    });
}
