import pino from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { MemoryService } from "../../src/memory/memory-service.js";
import { addEntry } from "../../src/memory/memory-edits.js";
import type { MemoryKey } from "../../src/memory/memory-key.js";
import type { EventDraft } from "../../src/events/agent-event.js";
import type { DurableStore } from "../../src/store/durable-store.js";
import { openPostgresStore } from "../../src/store/postgres/postgres-store.js";
import { type PostgresServer, postgresMissingReason, startPostgres } from "../support/postgres-server.js";

const logger = pino({ level: "silent" });
const missing = postgresMissingReason();

/** Two nodes on one database: each its own store and memory service, as two daemons have. */
describe.skipIf(missing !== undefined)("memories in the PostgreSQL store", { timeout: 120_000 }, () => {
  let postgres: PostgresServer;
  const stores: DurableStore[] = [];

  beforeAll(async () => {
    postgres = await startPostgres();
  }, 60_000);

  afterAll(async () => {
    for (const store of stores) await store.close();
    await postgres?.stop();
  });

  async function node(url: string) {
    const store = await openPostgresStore({
      url,
      leaseMilliseconds: 30_000,
      bufferSize: 100,
      logger,
      now: () => new Date(),
    });
    stores.push(store);
    await store.start();
    if (!store.memories) throw new Error("the PostgreSQL store keeps no memories");
    return new MemoryService({ store: store.memories, redact: (text) => text });
  }

  const told: EventDraft[] = [];
  const writer = {
    agents: ["notes"],
    run: "r_1",
    events: { publish: (draft: EventDraft) => told.push(draft) },
    by: "agent" as const,
  };
  const key: MemoryKey = { kind: "shared", scope: "team" };

  it("loses no entry when two nodes write one memory at once, and refuses a stale operator write", async () => {
    const url = await postgres.createDatabase("memories");
    const [first, second] = await Promise.all([node(url), node(url)]);
    const entries = (name: string) => Array.from({ length: 10 }, (_, index) => `${name} entry ${index}`);
    const writeAll = (service: MemoryService, name: string) =>
      Promise.all(
        entries(name).map((text) =>
          service.edit(
            key,
            {
              change: { operation: "add", text },
              edit: (content) => addEntry(content, text),
              maxChars: 10_000,
            },
            writer,
          ),
        ),
      );
    await Promise.all([writeAll(first, "first"), writeAll(second, "second")]);
    const memory = await second.read(key);
    for (const text of [...entries("first"), ...entries("second")]) expect(memory.content).toContain(text);
    expect(told.filter((event) => event.type === "memory")).toHaveLength(20);

    const seen = await first.read(key);
    await second.set(key, "replaced by the operator\n", seen.version, {
      ...writer,
      by: "operator",
      run: null,
    });
    await expect(
      first.set(key, "a stale edit\n", seen.version, { ...writer, by: "operator", run: null }),
    ).rejects.toMatchObject({
      code: "CONFLICT",
    });
    expect((await first.read(key)).content).toBe("replaced by the operator\n");
  });
});
