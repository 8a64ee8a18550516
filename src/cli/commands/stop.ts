import type { Command } from "commander";
import { RunRecordSchema } from "../../runs/run-record-schema.js";
import { type ClientCommandIo, clientOf, processIo } from "../daemon-client.js";

/** `agentd stop <run>`: stops a run of the running daemon (reason user_stop). */
export function registerStopCommand(program: Command, io: ClientCommandIo = processIo): void {
  program
    .command("stop <run>")
    .description("stop a run of the running daemon")
    .action(async (run: string, _options: unknown, command: Command) => {
      const { client, json } = clientOf(command, io);
      const record = await client.post(`/runs/${encodeURIComponent(run)}/stop`, undefined, RunRecordSchema);
      io.out(json ? JSON.stringify(record) : `${record.id}: stop requested (now ${record.status})`);
    });
}
