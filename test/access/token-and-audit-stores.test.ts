import {
  appendFileSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { execFileSync } from "node:child_process";
import os from "node:os";
import path from "node:path";
import pino from "pino";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import type { AuditLog } from "../../src/access/audit-log.js";
import { FilesAuditLog } from "../../src/access/files-audit-log.js";
import { FilesTokenStore } from "../../src/access/files-token-store.js";
import { TokenRegistry } from "../../src/access/token-registry.js";
import type { TokenStore } from "../../src/access/token-store.js";
import { ConfigSchema } from "../../src/config/config-schema.js";
import { type AccessStores, openAccessStores } from "../../src/store/open-access-stores.js";
import { ManualClock } from "../support/manual-clock.js";
import { type PostgresServer, postgresMissingReason, startPostgres } from "../support/postgres-server.js";
import { waitFor } from "../support/wait-for.js";

const logger = pino({ level: "silent" });
const missing = postgresMissingReason();
const DEFAULT = "the-daemons-own-token";

/** Two daemons' registries on one store: what one creates or revokes, the other follows. */
async function checkSharedRegistries(storeOf: () => TokenStore, close: (registry: TokenRegistry) => void) {
  const first = await TokenRegistry.open({
    defaultToken: DEFAULT,
    store: storeOf(),
    logger,
    refreshMilliseconds: 50,
  });
  const second = await TokenRegistry.open({
    defaultToken: DEFAULT,
    store: storeOf(),
    logger,
    refreshMilliseconds: 50,
  });
  try {
    expect(first.identify(DEFAULT)).toMatchObject({ name: "default", role: "admin" });
    const created = await first.create("ci", "run", "token:default");
    expect(created.token).toMatch(/^agentd_/);
    const identity = first.identify(created.token);
    expect(identity).toMatchObject({ name: "ci", role: "run" });
    await waitFor(() => second.identify(created.token), "the other node to accept the token");
    expect(second.list()).toEqual([
      expect.objectContaining({ name: "ci", role: "run", created_by: "token:default" }),
    ]);
    await expect(first.create("ci", "read", "x")).rejects.toMatchObject({ code: "CONFLICT" });
    expect(first.identify(`${created.token}x`)).toBeUndefined();

    if (identity === undefined) throw new Error("the token was not identified");
    let changesSeen = 0;
    const stopListening = first.onChange(() => changesSeen++);
    // Revoked on one node and created again, same name, lesser role, before the other looks: what
    // the old token opened on the other node must not pass for the new one's.
    await second.revoke("ci");
    expect(second.identify(created.token)).toBeUndefined();
    expect(second.isActive(identity)).toBe(false);
    const again = await second.create("ci", "read", "token:default");
    await waitFor(() => first.identify(again.token), "the other node to accept the new token");
    expect(first.identify(created.token)).toBeUndefined();
    expect(first.isActive(identity)).toBe(false);
    expect(changesSeen).toBeGreaterThan(0);
    stopListening();
    await first.revoke("ci");
    await expect(first.revoke("ci")).rejects.toMatchObject({ code: "NOT_FOUND" });
    expect(first.identify(DEFAULT)).toMatchObject({ name: "default", role: "admin" });
  } finally {
    close(first);
    close(second);
  }
}

/** Appends from several writers, read back in order, page by page. */
async function checkAuditLog(logs: AuditLog[], clock: ManualClock) {
  const [one, two] = logs;
  if (!one || !two) throw new Error("two logs");
  const written = [];
  for (let index = 0; index < 6; index++) {
    const log = index % 2 === 0 ? one : two;
    written.push(
      await log.append({
        action: "run.stop",
        actor: { kind: "token", name: `t${index}` },
        agent: "a",
        run: `r_${index}`,
      }),
    );
    clock.advanceTo(clock.now() + (index === 2 ? 86_400_000 : 5));
  }
  const all = await one.page(undefined, 100);
  expect(all.map((entry) => entry.actor.name)).toEqual(["t0", "t1", "t2", "t3", "t4", "t5"]);
  expect(all).toEqual(written);
  const firstPage = await two.page(undefined, 4);
  expect(firstPage).toHaveLength(4);
  const rest = await two.page(firstPage.at(-1)?.id, 4);
  expect(rest.map((entry) => entry.actor.name)).toEqual(["t4", "t5"]);
  expect(await two.page(rest.at(-1)?.id, 4)).toEqual([]);
}

describe("named tokens and the audit trail in files", () => {
  let folder: string;
  beforeAll(() => {
    folder = mkdtempSync(path.join(os.tmpdir(), "agentd-access-"));
  });
  afterAll(() => rmSync(folder, { recursive: true, force: true }));

  it("shares tokens between registries through tokens.json, hashes only, mode 0600", async () => {
    await checkSharedRegistries(
      () => new FilesTokenStore(folder),
      (registry) => registry.close(),
    );
    const file = path.join(folder, "tokens.json");
    expect(readFileSync(file, "utf8")).toContain('"tokens": []');
    expect(statSync(file).mode & 0o777).toBe(0o600);
  });

  it("appends whole lines a day per file and pages them in order, skipping a torn end", async () => {
    const clock = new ManualClock(Date.parse("2026-11-29T23:59:59Z"));
    const data = path.join(folder, "audit-data");
    // A line a crash cut short, at the end of the day's file.
    mkdirSync(path.join(data, "audit"), { recursive: true });
    writeFileSync(path.join(data, "audit", "2026-11-29.jsonl"), '{"id":"0000');
    await checkAuditLog([new FilesAuditLog(data, { clock }), new FilesAuditLog(data, { clock })], clock);
  });

  it("keeps its next entry whole after another writer left a torn line in the file it holds open", async () => {
    const clock = new ManualClock(Date.parse("2026-11-30T12:00:00Z"));
    const data = path.join(folder, "audit-torn-between");
    const log = new FilesAuditLog(data, { clock });
    const draft = (name: string) => ({
      action: "run.stop" as const,
      actor: { kind: "token" as const, name },
      agent: "a",
    });
    const first = await log.append(draft("before"));
    // Another process crashed mid-line after this log's last write.
    appendFileSync(path.join(data, "audit", "2026-11-30.jsonl"), '{"id":"0000');
    clock.advanceTo(clock.now() + 5);
    const second = await log.append(draft("after"));
    await log.close();
    expect(await new FilesAuditLog(data, { clock }).page(undefined, 10)).toEqual([first, second]);
  });

  // Before: a FIFO held GET /audit (and one of libuv's four threads) for ever, a link to /dev/zero
  // read half a gigabyte before failing, and a folder answered 500 INTERNAL.
  it("serves the other days, and names the file once, when a day file is a FIFO, a link to a device or a folder", async () => {
    const clock = new ManualClock(Date.parse("2026-11-30T12:00:00Z"));
    const data = path.join(folder, "audit-damaged-days");
    const lines: string[] = [];
    const logger = pino({ level: "warn" }, { write: (line: string) => void lines.push(line) });
    const log = new FilesAuditLog(data, { clock, logger });
    const kept = await log.append({ action: "run.stop", actor: { kind: "token", name: "ops" }, agent: "a" });
    const audit = path.join(data, "audit");
    execFileSync("mkfifo", [path.join(audit, "2026-11-27.jsonl")]);
    symlinkSync("/dev/zero", path.join(audit, "2026-11-28.jsonl"));
    mkdirSync(path.join(audit, "2026-11-29.jsonl"));

    expect(await log.page(undefined, 10)).toEqual([kept]);
    expect(await log.page(undefined, 10)).toEqual([kept]);
    const said = lines.map((line) => (JSON.parse(line) as { msg: string }).msg);
    expect(said).toHaveLength(3);
    for (const day of ["2026-11-27", "2026-11-28", "2026-11-29"])
      expect(said).toContainEqual(expect.stringMatching(new RegExp(`cannot be read.*${day}\\.jsonl aside`)));
    // Pruning past them neither hangs nor throws; what it cannot read it leaves.
    await expect(log.prune(new Date("2026-11-30T00:00:00Z"))).resolves.toBe(0);
    await log.close();
  });

  it("answers no entries, and says what to do once, when a file is where the audit folder should be", async () => {
    const data = path.join(folder, "audit-not-a-folder");
    mkdirSync(data, { recursive: true });
    writeFileSync(path.join(data, "audit"), "");
    const lines: string[] = [];
    const logger = pino({ level: "warn" }, { write: (line: string) => void lines.push(line) });
    const log = new FilesAuditLog(data, { logger });
    expect(await log.page(undefined, 10)).toEqual([]);
    expect(await log.prune(new Date())).toBe(0);
    expect(lines.map((line) => (JSON.parse(line) as { msg: string }).msg)).toEqual([
      expect.stringMatching(/audit is not a folder: .*move it aside.*restart/),
    ]);
  });
});

describe.skipIf(missing !== undefined)(
  "named tokens and the audit trail in PostgreSQL",
  { timeout: 120_000 },
  () => {
    let postgres: PostgresServer;
    const opened: AccessStores[] = [];
    beforeAll(async () => {
      postgres = await startPostgres();
    }, 60_000);
    afterEach(async () => {
      for (const stores of opened.splice(0)) await stores.close();
    });
    afterAll(async () => {
      await postgres?.stop();
    });

    async function open(url: string, clock?: ManualClock): Promise<AccessStores> {
      const config = ConfigSchema.parse({ data_dir: "/nonexistent", store: { backend: "postgres", url } });
      const stores = await openAccessStores({ config, logger, ...(clock ? { clock } : {}) });
      opened.push(stores);
      return stores;
    }

    it("lets every node accept a token created on one and refuse it once revoked on another", async () => {
      const url = await postgres.createDatabase("tokens");
      const nodes = [await open(url), await open(url)];
      let next = 0;
      await checkSharedRegistries(
        () => {
          const node = nodes[next++ % 2];
          if (!node) throw new Error("two nodes");
          return node.tokens;
        },
        (registry) => registry.close(),
      );
    });

    it("lets a node that read the tokens while a revoke was committing refuse the token after it", async () => {
      const url = await postgres.createDatabase("tokens_race");
      const [first, second] = [await open(url), await open(url)];
      if (!first || !second) throw new Error("two nodes");
      // Refreshed only when the test says: the read is made at the moment the race needs.
      const [revoking, reading] = await Promise.all(
        [first, second].map((node) =>
          TokenRegistry.open({
            defaultToken: DEFAULT,
            store: node.tokens,
            logger,
            refreshMilliseconds: 3_600_000,
          }),
        ),
      );
      if (!revoking || !reading) throw new Error("two registries");
      const { default: pg } = await import("pg");
      const holder = new pg.Client({ connectionString: url });
      await holder.connect();
      try {
        const created = await revoking.create("ci", "run", "token:default");
        await reading.refresh();
        expect(reading.identify(created.token)).toMatchObject({ name: "ci" });
        // The revoke's statement waits, once it has moved the change counter, on a lock the test
        // holds: the moment between the counter and the commit, made as long as the test needs.
        await holder.query(`CREATE FUNCTION hold_delete() RETURNS trigger LANGUAGE plpgsql AS $$
          BEGIN PERFORM pg_advisory_lock(4242); PERFORM pg_advisory_unlock(4242); RETURN OLD; END $$`);
        await holder.query(
          "CREATE TRIGGER hold_delete BEFORE DELETE ON agentd_tokens FOR EACH ROW EXECUTE FUNCTION hold_delete()",
        );
        await holder.query("SELECT pg_advisory_lock(4242)");
        const revoked = revoking.revoke("ci");
        await waitFor(async () => {
          const waiting = await holder.query(
            "SELECT 1 FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND wait_event = 'advisory'",
          );
          return (waiting.rowCount ?? 0) > 0 || undefined;
        }, "the revoke to wait on the lock");
        await reading.refresh();
        await holder.query("SELECT pg_advisory_unlock(4242)");
        await revoked;
        await reading.refresh();
        expect(reading.identify(created.token)).toBeUndefined();
      } finally {
        revoking.close();
        reading.close();
        await holder.end();
      }
    });

    it("keeps an append-only audit table, paged in order", async () => {
      const url = await postgres.createDatabase("audit");
      const clock = new ManualClock(Date.parse("2026-11-29T12:00:00Z"));
      const nodes = [await open(url, clock), await open(url, clock)];
      await checkAuditLog(
        nodes.map((node) => node.audit),
        clock,
      );
      const { default: pg } = await import("pg");
      const client = new pg.Client({ connectionString: url });
      await client.connect();
      try {
        await expect(client.query("DELETE FROM agentd_audit")).rejects.toThrow(/append-only/);
        await expect(client.query("UPDATE agentd_audit SET entry = '{}'")).rejects.toThrow(/append-only/);
      } finally {
        await client.end();
      }
    });
  },
);
