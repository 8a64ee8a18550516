import type { Command } from "commander";
import { z } from "zod";
import { terminalSafeText } from "../../util/terminal-safe-text.js";
import { type ClientCommandIo, clientOf, processIo } from "../daemon-client.js";

const ApprovalListSchema = z.object({
  approvals: z.array(
    z.object({
      id: z.string(),
      agent: z.string(),
      run: z.string(),
      tool: z.string(),
      arguments: z.unknown().optional(),
      expires_at: z.string().optional(),
    }),
  ),
});

/** `agentd approvals`: tool calls waiting for an answer. */
export function registerApprovalsCommand(program: Command, io: ClientCommandIo = processIo): void {
  program
    .command("approvals")
    .description("list tool calls waiting for approval (answer with agentd approve|deny <id>)")
    .action(async (_options: unknown, command: Command) => {
      const { client, json } = clientOf(command, io);
      const { approvals } = await client.get("/approvals", ApprovalListSchema);
      if (json) for (const approval of approvals) io.out(JSON.stringify(approval));
      else if (approvals.length === 0) io.out("no pending approvals");
      else {
        for (const approval of approvals) {
          const expires = approval.expires_at ? `  expires ${approval.expires_at}` : "";
          const call = `${approval.tool} ${JSON.stringify(approval.arguments ?? {})}`;
          io.out(terminalSafeText(`${approval.id}  ${approval.agent}  ${approval.run}  ${call}${expires}`));
        }
      }
    });
}
