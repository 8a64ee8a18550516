import type { Command } from "commander";
import { AuditPageSchema } from "../../api/access-schemas.js";
import { AgentdError } from "../../errors/agentd-error.js";
import { type ClientCommandIo, clientOf, processIo } from "../daemon-client.js";

interface AuditOptions {
  after?: string;
  limit?: string;
}

/** Entries fetched per request. */
const PAGE = 1_000;

/**
 * `agentd audit [--after <id>] [--limit n]`: the daemon's audit trail, oldest first, one line per
 * entry (`--json`: one object per line); the last line names the cursor for the next call.
 */
export function registerAuditCommand(program: Command, io: ClientCommandIo = processIo): void {
  program
    .command("audit")
    .description("print the audit trail (admin): who started, stopped, approved, answered, changed what")
    .option("--after <id>", "only entries after this one (the cursor a previous call printed)")
    .option("--limit <n>", "at most this many entries (default: all)")
    .action(async (options: AuditOptions, command: Command) => {
      const { client, json } = clientOf(command, io);
      const limit = options.limit === undefined ? Number.POSITIVE_INFINITY : Number(options.limit);
      if (!(limit >= 1) || (Number.isFinite(limit) && !Number.isInteger(limit))) {
        throw new AgentdError("USAGE", "--limit must be a whole number, 1 or more");
      }
      let after = options.after;
      let printed = 0;
      while (printed < limit) {
        const wanted = Math.min(PAGE, limit - printed);
        const query = new URLSearchParams({ limit: String(wanted) });
        if (after !== undefined) query.set("after", after);
        const page = await client.get(`/audit?${query}`, AuditPageSchema);
        for (const entry of page.entries) {
          io.out(json ? JSON.stringify(entry) : formatEntry(entry));
          printed++;
        }
        if (page.next !== null) after = page.next;
        if (page.entries.length < wanted) break;
      }
      if (!json && printed === 0) io.err("no audit entries");
      else if (!json && after !== undefined) io.err(`next: agentd audit --after ${after}`);
    });
}

/** `2026-…Z  token:ci  run.stop  writer r_…`. */
function formatEntry(entry: {
  time: string;
  actor: { kind: string; name: string };
  action: string;
  agent?: string | undefined;
  run?: string | undefined;
  target?: string | undefined;
}): string {
  return [
    entry.time,
    `${entry.actor.kind}:${entry.actor.name}`.padEnd(24),
    entry.action.padEnd(16),
    entry.agent ?? "",
    entry.run ?? "",
    entry.target ?? "",
  ]
    .filter((part) => part !== "")
    .join("  ");
}
