import { existsSync, readdirSync } from "node:fs";
import path from "node:path";
import type pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { RunRecord } from "../../src/run-vocabulary/run-record.js";
import type { DaemonProcess } from "../support/daemon-process.js";
import { type PostgresCluster, startPostgresCluster } from "../support/postgres-cluster.js";
import { postgresMissingReason } from "../support/postgres-server.js";
import { textReply } from "../support/scripted-llm-server.js";
import { useTestKit } from "../support/test-kit.js";
import { waitFor } from "../support/wait-for.js";
import { TICKER_CONFIG, writeTicker } from "../support/postgres-ticker.js";

/** libfaketime, as the `faketime` package installs it (Debian: /usr/lib/<triplet>/faketime). */
function faketimeLibrary(): string | undefined {
  for (const folder of ["/usr/lib", "/usr/local/lib"]) {
    const direct = path.join(folder, "faketime", "libfaketime.so.1");
    if (existsSync(direct)) return direct;
    if (!existsSync(folder)) continue;
    for (const entry of readdirSync(folder)) {
      const candidate = path.join(folder, entry, "faketime", "libfaketime.so.1");
      if (existsSync(candidate)) return candidate;
    }
  }
  return undefined;
}

const library = faketimeLibrary();
const missing =
  postgresMissingReason() ?? (library === undefined ? "faketime (libfaketime) is not installed" : undefined);
/** How far the skewed node's clock is ahead of everyone else's. */
const SKEW_MILLISECONDS = 30_000;
/**
 * How far a time may stray from the database's: the offset is measured to within half a round
 * trip, which a loaded machine can make long; far below the skew either way.
 */
const TOLERANCE_MILLISECONDS = 5_000;

/**
 * One clock: a node whose own clock is 30 s ahead (libfaketime) fires schedules on time by the
 * database's clock, stamps records and events in it, and no fire runs twice, beside a node whose
 * clock is right, on a real PostgreSQL.
 */
describe.skipIf(missing !== undefined)("a node with a skewed clock", { timeout: 240_000 }, () => {
  const kit = useTestKit("file");
  let cluster: PostgresCluster;
  let database: pg.Pool;

  beforeAll(async () => {
    cluster = await startPostgresCluster(kit, {
      nodes: 2,
      lease: 6_000,
      reply: textReply("tick done"),
      environment: (index): Record<string, string> =>
        index === 1 ? { LD_PRELOAD: library as string, FAKETIME: `+${SKEW_MILLISECONDS / 1_000}s` } : {},
      config: () => TICKER_CONFIG,
      agents: writeTicker,
    });
    database = cluster.database;
  }, 180_000);

  // Before the kit's clean-up (hooks after a test run last registered first): the daemons go
  // here, with room for a loaded machine, and the kit's 20 s is left for PostgreSQL and the model.
  afterAll(async () => {
    await Promise.all((cluster?.nodes ?? []).map((node) => node.kill()));
  }, 60_000);

  it("fires on time by the database's clock, stamps in it, and runs no fire twice", async () => {
    const skewed = cluster.ids[1] as string;
    // The skewed node's own clock really is ahead: its log lines carry the faked time.
    const logged = (cluster.nodes[1] as DaemonProcess)
      .stderr()
      .split("\n")
      .flatMap((line) => {
        const time = line.startsWith("{") ? (JSON.parse(line) as { time?: unknown }).time : undefined;
        return typeof time === "number" ? [time] : [];
      });
    expect(logged[0]).toBeGreaterThan(Date.now() + SKEW_MILLISECONDS / 2);
    const claims = await waitFor(
      async () => {
        const rows = await database.query<{ node: string; scheduled_for: string; claimed_at: Date }>(
          "SELECT node, scheduled_for, claimed_at FROM agentd_schedule_fires WHERE agent = 'ticker' ORDER BY scheduled_for",
        );
        return rows.rows.filter((row) => row.node === skewed).length >= 8 ? rows.rows : undefined;
      },
      "the skewed node to claim eight fires",
      120_000,
    );
    // On time: each fire is claimed once it is due by the database's clock, not 30 s before.
    const early = claims.filter(
      (row) => row.claimed_at.getTime() < Date.parse(row.scheduled_for) - TOLERANCE_MILLISECONDS,
    );
    expect(early).toEqual([]);

    const clock = await database.query<{ now: Date }>("SELECT clock_timestamp() AS now");
    const databaseNow = (clock.rows[0] as { now: Date }).now.getTime();
    const runs = await database.query<{ record: string; node: string }>(
      "SELECT record, node FROM agentd_runs WHERE agent = 'ticker'",
    );
    const records = runs.rows.map((row) => JSON.parse(row.record) as RunRecord);
    const bySkewed = runs.rows
      .filter((row) => row.node === skewed)
      .map((row) => JSON.parse(row.record) as RunRecord);
    expect(bySkewed.length).toBeGreaterThan(0);
    // Records the skewed node stamped are in the database's time, not 30 s ahead of it.
    for (const record of bySkewed)
      expect(Date.parse(record.created_at)).toBeLessThan(databaseNow + TOLERANCE_MILLISECONDS);
    // No fire ran twice, in the whole cluster.
    const times = records.flatMap((record) =>
      "scheduled_for" in record.trigger ? [record.trigger.scheduled_for] : [],
    );
    expect(times.filter((time, index) => times.indexOf(time) !== index)).toEqual([]);

    // Event times are the database's and never go backwards within the agent.
    const events = await database.query<{ line: string }>(
      "SELECT line FROM agentd_events WHERE agent = 'ticker' ORDER BY id",
    );
    const stamps = events.rows.map((row) => Date.parse((JSON.parse(row.line) as { time: string }).time));
    expect(stamps.length).toBeGreaterThan(0);
    const backwards = stamps.filter((time, index) => index > 0 && time < (stamps[index - 1] as number));
    expect(backwards).toEqual([]);
    expect(Math.max(...stamps)).toBeLessThan(databaseNow + TOLERANCE_MILLISECONDS);
  });
});
