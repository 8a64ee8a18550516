import { setTimeout as delay } from "node:timers/promises";
import type { Command } from "commander";
import type { z } from "zod";
import { AgentdError } from "../../errors/agentd-error.js";
import { type ClientCommandIo, clientOf, PollResponseSchema, processIo } from "../daemon-client.js";
import { formatEventLine } from "../terminal/event-line.js";

const PAGE_SIZE = 500;
const FOLLOW_WAIT_SECONDS = 30;
const RECONNECT_DELAY_MILLISECONDS = 2_000;

interface EventsOptions {
  follow?: boolean;
  after?: string;
}

/** `agentd events <agent> [--follow] [--after N]`: an agent's events from the daemon, by cursor. */
export function registerEventsCommand(program: Command, io: ClientCommandIo = processIo): void {
  program
    .command("events <agent>")
    .description("print an agent's events from the running daemon; --follow keeps printing new ones")
    .option("-f, --follow", "keep waiting for new events (long poll) until interrupted")
    .option("--after <id>", "only events with an id above this one (default: all still in memory)")
    .action(async (agent: string, options: EventsOptions, command: Command) => {
      const { client, json } = clientOf(command, io);
      let after = parseAfter(options.after);
      const stop = new AbortController();
      const interrupt = () => stop.abort();
      if (io.stop) io.stop.addEventListener("abort", interrupt, { once: true });
      else process.once("SIGINT", interrupt);
      let unreachable = false;
      try {
        for (;;) {
          const wait = options.follow ? `&wait=${FOLLOW_WAIT_SECONDS}` : "";
          const path = `/agents/${encodeURIComponent(agent)}/events?after=${after}&limit=${PAGE_SIZE}${wait}`;
          let page: z.infer<typeof PollResponseSchema>;
          try {
            page = await client.get(path, PollResponseSchema, stop.signal);
          } catch (error) {
            if (stop.signal.aborted) return;
            // A followed daemon that restarts is waited for, like tail -F; a first failure is fatal.
            if (!options.follow || !AgentdError.is(error, "DAEMON_UNREACHABLE") || after === 0) throw error;
            if (!unreachable) io.err(`warning: ${error.message}; retrying`);
            unreachable = true;
            await delay(RECONNECT_DELAY_MILLISECONDS, undefined, { signal: stop.signal }).catch(
              () => undefined,
            );
            if (stop.signal.aborted) return;
            continue;
          }
          unreachable = false;
          if (page.missed > 0) {
            io.err(
              `warning: ${page.missed} event(s) of ${agent} after #${after} are no longer in memory ` +
                `(oldest kept: #${page.oldest}); a run's whole log is at GET /runs/<run>/events`,
            );
          }
          for (const event of page.events)
            io.out(
              json
                ? JSON.stringify(event)
                : formatEventLine(event, { color: Boolean(io.color), cursor: true }),
            );
          after = page.next;
          if (!options.follow && page.events.length < PAGE_SIZE) return;
        }
      } finally {
        process.off("SIGINT", interrupt);
        io.stop?.removeEventListener("abort", interrupt);
      }
    });
}

function parseAfter(text: string | undefined): number {
  if (text === undefined) return 0;
  if (!/^\d{1,15}$/.test(text)) {
    throw new AgentdError("USAGE", `--after must be an event id (a whole number), not "${text}"`);
  }
  return Number(text);
}
