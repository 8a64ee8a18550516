import { z } from "zod";
import type { CliCooldown, CliCooldownRecords } from "../../workers/cli/cli-cooldown-records.js";
import type { PostgresWriter } from "./postgres-writer.js";

/** A row of `agentd_cli_cooldowns` as the snapshot and the change feed read it. */
export const CooldownRowSchema = z.object({
  tool: z.string(),
  until: z.date(),
  kind: z.enum(["quota", "rate_limit"]),
  message: z.string(),
});

/**
 * The cluster's CLI cooldowns: one row per tool in `agentd_cli_cooldowns`, written through the
 * writer (so a start waits out a database outage like every other change) and followed by the
 * change feed, so a quota hit on one node rests the tool on every node within the feed's delay.
 * `active` answers from memory.
 */
export class PostgresCliCooldowns implements CliCooldownRecords {
  readonly #cooldowns = new Map<string, CliCooldown>();
  readonly #writer: PostgresWriter;
  readonly #now: () => Date;

  constructor(options: { writer: PostgresWriter; now: () => Date }, loaded: CliCooldown[]) {
    this.#writer = options.writer;
    this.#now = options.now;
    for (const cooldown of loaded) this.#cooldowns.set(cooldown.tool, cooldown);
  }

  active(tool: string): CliCooldown | undefined {
    const cooldown = this.#cooldowns.get(tool);
    if (!cooldown) return undefined;
    if (cooldown.until.getTime() > this.#now().getTime()) return cooldown;
    // The row stays (one per tool, replaced by the next cooldown): every node expires it by its time.
    this.#cooldowns.delete(tool);
    return undefined;
  }

  start(cooldown: CliCooldown): void {
    this.#cooldowns.set(cooldown.tool, cooldown);
    this.#writer.enqueue({ kind: "cli_cooldown", cooldown });
  }

  /** A cooldown another node started (the change feed). */
  applyRemote(cooldown: CliCooldown): void {
    this.#cooldowns.set(cooldown.tool, cooldown);
  }
}
