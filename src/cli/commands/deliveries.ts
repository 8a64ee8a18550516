import type { Command } from "commander";
import { z } from "zod";
import { terminalSafeLine } from "../../util/terminal-safe-text.js";
import { type ClientCommandIo, clientOf, processIo } from "../daemon-client.js";

const DeliveryListSchema = z.object({
  deliveries: z.array(
    z.object({
      id: z.string(),
      agent: z.string(),
      run: z.string().nullable(),
      target: z.string(),
      to: z.string(),
      when: z.string(),
      status: z.string(),
      attempts: z.array(z.object({ at: z.string(), ok: z.boolean(), error: z.string().optional() })),
      created_at: z.string(),
      next_attempt_at: z.string().optional(),
    }),
  ),
});

const TargetListSchema = z.object({
  targets: z.array(
    z.object({
      agent: z.string().nullable(),
      target: z.string(),
      to: z.string(),
      when: z.array(z.string()),
      destination: z.string(),
      health: z.string(),
      last_at: z.string().nullable(),
      last_error: z.string().nullable(),
      failing_streak: z.number(),
    }),
  ),
});

/**
 * `agentd deliveries`: runs' outcomes sent to their targets, newest first; `--targets`: every
 * configured target with its health.
 */
export function registerDeliveriesCommand(program: Command, io: ClientCommandIo = processIo): void {
  program
    .command("deliveries")
    .description(
      "list deliveries of runs' outcomes (newest first); --status pending|retrying|sent|failed; --targets: the targets and their health",
    )
    .option("--status <status>", "only deliveries in this status")
    .option("--limit <n>", "at most this many", "50")
    .option("--targets", "list the configured targets with their health instead")
    .action(async (options: { status?: string; limit: string; targets?: boolean }, command: Command) => {
      const { client, json } = clientOf(command, io);
      if (options.targets === true) {
        const { targets } = await client.get("/deliveries/targets", TargetListSchema);
        if (json) for (const target of targets) io.out(JSON.stringify(target));
        else if (targets.length === 0) io.out("no delivery targets");
        else {
          for (const target of targets) {
            const streak = target.failing_streak > 0 ? ` (${target.failing_streak} failed in a row)` : "";
            const last = target.last_at === null ? "" : `  last ${target.last_at}`;
            const error = target.last_error === null ? "" : `  ${target.last_error}`;
            // A receiver's answer is in the error: shown, never obeyed by the terminal.
            io.out(
              terminalSafeLine(
                `${target.agent ?? "(no agent)"}  ${target.target} (${target.to}, ${target.when.join("|")})  ${target.destination}  ${target.health}${streak}${last}${error}`,
              ),
            );
          }
        }
        return;
      }
      const query = new URLSearchParams({ limit: options.limit });
      if (options.status !== undefined) query.set("status", options.status);
      const { deliveries } = await client.get(`/deliveries?${query.toString()}`, DeliveryListSchema);
      if (json) for (const delivery of deliveries) io.out(JSON.stringify(delivery));
      else if (deliveries.length === 0) io.out("no deliveries");
      else {
        for (const delivery of deliveries) {
          const last = delivery.attempts.at(-1);
          const tries = `${delivery.attempts.length} attempt${delivery.attempts.length === 1 ? "" : "s"}`;
          const next = delivery.next_attempt_at ? `  next ${delivery.next_attempt_at}` : "";
          const error = last?.error && delivery.status !== "sent" ? `  ${last.error}` : "";
          io.out(
            terminalSafeLine(
              `${delivery.id}  ${delivery.created_at}  ${delivery.agent}  ${delivery.run ?? "-"}  ${delivery.target} (${delivery.to}, ${delivery.when})  ${delivery.status}  ${tries}${next}${error}`,
            ),
          );
        }
      }
    });
}
