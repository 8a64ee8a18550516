import type { Command } from "commander";
import { z } from "zod";
import { type ClientCommandIo, clientOf, processIo } from "../daemon-client.js";

/** What POST /agents/:id/enable|disable answers. */
const AgentSwitchAnswerSchema = z.object({
  id: z.string(),
  enabled: z.boolean(),
  switched_off: z.object({ by: z.string(), at: z.string() }).nullable(),
});

function registerSwitch(
  program: Command,
  io: ClientCommandIo,
  action: "enable" | "disable",
  description: string,
): void {
  program
    .command(`${action} <agent>`)
    .description(description)
    .action(async (agent: string, _options: unknown, command: Command) => {
      const { client, json } = clientOf(command, io);
      const answer = await client.post(
        `/agents/${encodeURIComponent(agent)}/${action}`,
        undefined,
        AgentSwitchAnswerSchema,
      );
      if (json) {
        io.out(JSON.stringify(answer));
        return;
      }
      io.out(
        answer.enabled
          ? `${answer.id}: enabled (its schedule and triggers start runs again)`
          : answer.switched_off
            ? `${answer.id}: disabled by ${answer.switched_off.by} at ${answer.switched_off.at} (no new runs until agentd enable ${answer.id})`
            : `${answer.id}: still disabled by its file (enabled: false)`,
      );
    });
}

/**
 * `agentd disable <agent>`: the running daemon starts no new run of the agent (schedule, triggers,
 * API) until `agentd enable <agent>`; kept across restarts in data_dir, the agent file untouched.
 */
export function registerDisableCommand(program: Command, io: ClientCommandIo = processIo): void {
  registerSwitch(
    program,
    io,
    "disable",
    "turn an agent off: no scheduled, triggered or API run until agentd enable (its file is untouched)",
  );
}

/** `agentd enable <agent>`: undoes `agentd disable` (an agent file saying `enabled: false` stays off). */
export function registerEnableCommand(program: Command, io: ClientCommandIo = processIo): void {
  registerSwitch(program, io, "enable", "turn an agent agentd disable turned off back on");
}
