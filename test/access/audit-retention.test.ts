import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import pino from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { AuditLog } from "../../src/access/audit-log.js";
import { AuditRetention } from "../../src/access/audit-retention.js";
import { FilesAuditLog } from "../../src/access/files-audit-log.js";
import { openDaemonAccess } from "../../src/app/daemon-access.js";
import { ConfigSchema } from "../../src/config/config-schema.js";
import { openAccessStores } from "../../src/store/open-access-stores.js";
import { ManualClock } from "../support/manual-clock.js";
import { SettableWallClock } from "../support/settable-wall-clock.js";
import { type PostgresServer, postgresMissingReason, startPostgres } from "../support/postgres-server.js";
import { waitFor } from "../support/wait-for.js";

const logger = pino({ level: "silent" });
const missing = postgresMissingReason();
const DAY = 86_400_000;
const START = Date.parse("2026-01-01T10:00:00Z");

/** Entries on days 0, 5 and 10 at 10:00 UTC; the clock is left at day 10, 12:00. */
async function writeDays(log: AuditLog, clock: ManualClock): Promise<void> {
  for (const day of [0, 5, 10]) {
    clock.advanceTo(START + day * DAY);
    await log.append({ action: "run.stop", actor: { kind: "token", name: `day${day}` }, run: `r_${day}` });
  }
  clock.advanceTo(START + 10 * DAY + 2 * 3_600_000);
}

async function namesIn(log: AuditLog): Promise<string[]> {
  return (await log.page(undefined, 100)).map((entry) => entry.actor.name);
}

/**
 * Seven days kept: the first prune (at start, day 10) deletes day 0; the timer's prune three days
 * later deletes day 5; day 10 stays.
 */
async function checkRetention(log: AuditLog, clock: ManualClock): Promise<void> {
  await writeDays(log, clock);
  const retention = new AuditRetention({ log, days: 7, clock, logger, intervalMilliseconds: 3 * DAY });
  retention.start();
  try {
    expect(await retention.pruneNow()).toBe(1);
    expect(await namesIn(log)).toEqual(["day5", "day10"]);
    clock.advanceBy(3 * DAY);
    await waitFor(async () => (await namesIn(log)).length === 1, "the timer's prune");
    expect(await namesIn(log)).toEqual(["day10"]);
  } finally {
    await retention.stop();
  }
  expect(clock.pending).toBe(0);
}

describe("retention.audit_days", () => {
  it("follows retention.days when left out, and is a whole number of 1 or more", () => {
    expect(ConfigSchema.parse({}).retention.audit_days).toBe(90);
    expect(ConfigSchema.parse({ retention: { days: 30 } }).retention.audit_days).toBe(30);
    expect(ConfigSchema.parse({ retention: { days: 30, audit_days: 400 } }).retention).toMatchObject({
      days: 30,
      audit_days: 400,
    });
    expect(ConfigSchema.parse({ retention: { audit_days: null } }).retention.audit_days).toBe(90);
    expect(() => ConfigSchema.parse({ retention: { audit_days: 0 } })).toThrow();
    expect(() => ConfigSchema.parse({ retention: { audit_days: 1.5 } })).toThrow();
  });
});

describe("the audit trail pruned in files", () => {
  let folder: string;
  beforeAll(() => {
    folder = mkdtempSync(path.join(os.tmpdir(), "agentd-audit-retention-"));
  });
  afterAll(() => rmSync(folder, { recursive: true, force: true }));

  it("deletes the day files past audit_days, at start and on the timer", async () => {
    const clock = new ManualClock(START);
    await checkRetention(new FilesAuditLog(path.join(folder, "unit"), { clock }), clock);
  });

  // Before: the prune aged entries by the wall clock: one set a year forward deleted every day.
  it("deletes no day kept when the clock is set far forward: it counts the time that passed", async () => {
    const clock = new SettableWallClock(START);
    const log = new FilesAuditLog(path.join(folder, "forward"), { clock });
    for (const day of [0, 5]) {
      clock.elapsedClock.advanceTo(START + day * DAY);
      await log.append({ action: "run.stop", actor: { kind: "token", name: `day${day}` }, run: `r_${day}` });
    }
    const lines: string[] = [];
    const warned = pino({ level: "warn" }, { write: (line: string) => void lines.push(line) });
    const retention = new AuditRetention({
      log,
      days: 7,
      clock,
      logger: warned,
      intervalMilliseconds: 1_000 * DAY,
    });
    expect(await retention.pruneNow()).toBe(0);
    clock.setForward(365 * DAY);
    clock.elapsedClock.advanceBy(3_600_000);
    expect(await retention.pruneNow()).toBe(0);
    expect(await namesIn(log)).toEqual(["day0", "day5"]);
    expect(lines.map((line) => (JSON.parse(line) as { msg: string }).msg)).toEqual([
      expect.stringMatching(/^the clock was set forward by 365 days.*the audit trail is pruned as of/),
    ]);
    // Time that really passes still ages them out.
    clock.elapsedClock.advanceBy(3 * DAY);
    expect(await retention.pruneNow()).toBe(1);
    expect(await namesIn(log)).toEqual(["day5"]);
    await retention.stop();
  });

  it("is pruned by the daemon's access stores at start, under config retention", async () => {
    const data = path.join(folder, "daemon");
    const clock = new ManualClock(START);
    await writeDays(new FilesAuditLog(data, { clock }), clock);
    const config = ConfigSchema.parse({ data_dir: data, retention: { days: 2, audit_days: 7 } });
    const access = await openDaemonAccess({
      config,
      logger,
      clock,
      token: undefined,
      publish: () => undefined,
    });
    try {
      await waitFor(async () => (await namesIn(new FilesAuditLog(data))).length === 2, "the prune at start");
      expect(await namesIn(new FilesAuditLog(data))).toEqual(["day5", "day10"]);
    } finally {
      await access.close();
    }
    expect(clock.pending).toBe(0);
  });
});

describe.skipIf(missing !== undefined)("the audit trail pruned in PostgreSQL", { timeout: 120_000 }, () => {
  let postgres: PostgresServer;
  beforeAll(async () => {
    postgres = await startPostgres();
  }, 60_000);
  afterAll(async () => {
    await postgres?.stop();
  });

  it("deletes the rows past audit_days, and nothing else can delete or change a row", async () => {
    const url = await postgres.createDatabase("audit_retention");
    const clock = new ManualClock(START);
    const config = ConfigSchema.parse({ data_dir: "/nonexistent", store: { backend: "postgres", url } });
    const stores = await openAccessStores({ config, logger, clock });
    try {
      await checkRetention(stores.audit, clock);
      const { default: pg } = await import("pg");
      const client = new pg.Client({ connectionString: url });
      await client.connect();
      try {
        await expect(client.query("DELETE FROM agentd_audit")).rejects.toThrow(/append-only/);
        await expect(client.query("UPDATE agentd_audit SET entry = '{}'")).rejects.toThrow(/append-only/);
        // A cutoff names the rows older than it: a newer row stays refused, even under one.
        await client.query("BEGIN");
        await client.query("SELECT set_config('agentd.audit_prune_before', '0', true)");
        await expect(client.query("DELETE FROM agentd_audit")).rejects.toThrow(/append-only/);
        await client.query("ROLLBACK");
      } finally {
        await client.end();
      }
      expect(await namesIn(stores.audit)).toEqual(["day10"]);
    } finally {
      await stores.close();
    }
  });
});
