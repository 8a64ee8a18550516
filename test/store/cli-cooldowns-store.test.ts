import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import pino from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { DurableStore } from "../../src/store/durable-store.js";
import { openFilesStore } from "../../src/store/files-store.js";
import { openPostgresStore } from "../../src/store/postgres/postgres-store.js";
import { type PostgresServer, postgresMissingReason, startPostgres } from "../support/postgres-server.js";
import { waitFor } from "../support/wait-for.js";

const logger = pino({ level: "silent" });
const missing = postgresMissingReason();

describe("CLI cooldowns in the files store", () => {
  // Resting a tool and finding its cooldown after a restart: test/store/durable-store.test.ts, for both stores.
  it("keeps them in <data_dir>/cli-cooldowns.json, as before", async () => {
    const dataDirectory = mkdtempSync(path.join(os.tmpdir(), "agentd-cooldowns-"));
    try {
      const now = () => new Date("2026-05-01T10:00:00Z");
      const first = openFilesStore({ dataDirectory, logger, now });
      first.cooldowns.start({
        tool: "claude",
        until: new Date("2026-05-01T10:10:00Z"),
        kind: "quota",
        message: "usage limit reached",
      });
      await first.close();
      const file = JSON.parse(
        readFileSync(path.join(dataDirectory, "cli-cooldowns.json"), "utf8"),
      ) as unknown;
      expect(file).toEqual({
        claude: { until: "2026-05-01T10:10:00.000Z", kind: "quota", message: "usage limit reached" },
      });
    } finally {
      rmSync(dataDirectory, { recursive: true, force: true });
    }
  });
});

/** A quota hit on one node rests the tool on every node sharing the database, until it expires. */
describe.skipIf(missing !== undefined)("CLI cooldowns in the PostgreSQL store", { timeout: 120_000 }, () => {
  let postgres: PostgresServer;
  const stores: DurableStore[] = [];

  beforeAll(async () => {
    postgres = await startPostgres();
  }, 60_000);

  afterAll(async () => {
    for (const store of stores) await store.close();
    await postgres?.stop();
  });

  async function open(url: string, now: () => Date): Promise<DurableStore> {
    const store = await openPostgresStore({ url, leaseMilliseconds: 30_000, bufferSize: 100, logger, now });
    stores.push(store);
    await store.start();
    return store;
  }

  it("shows a cooldown started on one node on another, and on a node started later, until it expires", async () => {
    const url = await postgres.createDatabase("cooldowns");
    let clock = new Date("2026-05-01T10:00:00Z");
    const now = () => clock;
    const nodeA = await open(url, now);
    const nodeB = await open(url, now);
    expect(nodeB.cooldowns.active("claude")).toBeUndefined();

    nodeA.cooldowns.start({
      tool: "claude",
      until: new Date("2026-05-01T10:10:00Z"),
      kind: "rate_limit",
      message: "429 too many requests",
    });
    expect(nodeA.cooldowns.active("claude")).toBeDefined();
    const seen = await waitFor(() => nodeB.cooldowns.active("claude"), "node B to see node A's cooldown");
    expect(seen).toEqual({
      tool: "claude",
      until: new Date("2026-05-01T10:10:00Z"),
      kind: "rate_limit",
      message: "429 too many requests",
    });
    expect(nodeB.cooldowns.active("codex")).toBeUndefined();

    // A node joining later loads it with the rest of the cluster's state.
    const nodeC = await open(url, now);
    expect(nodeC.cooldowns.active("claude")?.kind).toBe("rate_limit");

    clock = new Date("2026-05-01T10:10:01Z");
    for (const store of [nodeA, nodeB, nodeC]) expect(store.cooldowns.active("claude")).toBeUndefined();
  });
});
