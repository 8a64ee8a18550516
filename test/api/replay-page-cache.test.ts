import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { EventBus } from "../../src/events/event-bus.js";
import { EventStore } from "../../src/events/event-store.js";
import { createLogger } from "../../src/logging/logger.js";
import { ReplayPageCache } from "../../src/api/replay-page-cache.js";

const logger = createLogger({ level: "silent", pretty: false });
const LEAD = ": agentd event stream\nretry: 2000\n\n";

describe("ReplayPageCache", () => {
  let dataDirectory: string;
  let bus: EventBus;
  let store: EventStore;
  afterEach(() => {
    store.close();
    rmSync(dataDirectory, { recursive: true, force: true });
  });

  async function open(bufferSize: number): Promise<void> {
    dataDirectory = mkdtempSync(path.join(tmpdir(), "agentd-replay-cache-"));
    bus = new EventBus();
    store = await EventStore.open({ dataDirectory, bufferSize, bus, logger });
  }

  const publish = (agent: string, text: string) =>
    bus.publish({ agent, run: null, type: "thought", data: { text } });

  /** The frames a stream writes for the agent's events after `after`, built from the ring by hand. */
  function expected(agent: string, after: number): string {
    const page = store.pollLines(agent, { after, limit: 1_000 });
    return LEAD + page.lines.map((line, index) => `id: ${page.ids[index]}\ndata: ${line}\n\n`).join("");
  }

  it("gives the lead and the frames of the backlog, kept until an event of the agent arrives", async () => {
    await open(10);
    const cache = new ReplayPageCache(store, { pageEvents: 5 });
    publish("a", "one");
    publish("a", "two");
    const first = cache.firstPage("a", 0, LEAD);
    expect(first?.bytes.toString("utf8")).toBe(expected("a", 0));
    expect(first?.lastId).toBe(2);
    // The same page, the same bytes: kept, not built again.
    expect(cache.firstPage("a", 0, LEAD)?.bytes).toBe(first?.bytes);
    // Another agent's event leaves it as it is.
    publish("b", "other");
    expect(cache.firstPage("a", 0, LEAD)?.bytes).toBe(first?.bytes);
    // An event of the agent: built anew, with it.
    publish("a", "three");
    const third = cache.firstPage("a", 0, LEAD);
    expect(third?.bytes).not.toBe(first?.bytes);
    expect(third?.bytes.toString("utf8")).toBe(expected("a", 0));
    expect(third?.lastId).toBe(3);
    // Another cursor or another lead: built for it.
    expect(cache.firstPage("a", 2, LEAD)?.bytes.toString("utf8")).toBe(expected("a", 2));
    expect(cache.firstPage("a", 2, "")?.bytes.toString("utf8")).toBe(expected("a", 2).slice(LEAD.length));
    // Nothing after the cursor: the lead alone, the cursor as the last id.
    expect(cache.firstPage("a", 3, LEAD)).toMatchObject({ lastId: 3 });
    expect(cache.firstPage("a", 3, LEAD)?.bytes.toString("utf8")).toBe(LEAD);
    expect(cache.firstPage("quiet", 0, LEAD)?.bytes.toString("utf8")).toBe(LEAD);
  });

  it("gives none when the backlog is a page or more, or older than the ring", async () => {
    await open(4);
    const cache = new ReplayPageCache(store, { pageEvents: 3 });
    for (const text of ["1", "2", "3"]) publish("a", text);
    expect(cache.firstPage("a", 0, LEAD)).toBeUndefined();
    expect(cache.firstPage("a", 1, LEAD)?.lastId).toBe(3);
    // Kept for cursor 1; then the ring (of 4) drops events 1 and 2 as events 4 to 6 come.
    for (const text of ["4", "5", "6"]) publish("a", text);
    expect(store.pollLines("a", { after: 1 }).missed).toBe(1);
    expect(cache.firstPage("a", 1, LEAD)).toBeUndefined();
    expect(cache.firstPage("a", 4, LEAD)?.bytes.toString("utf8")).toBe(expected("a", 4));
  });

  it("keeps no page above its largest size and forgets all past its total", async () => {
    await open(10);
    const cache = new ReplayPageCache(store, { pageEvents: 5, largestPage: 300, totalBytes: 250 });
    publish("big", "x".repeat(400));
    publish("a", "a");
    publish("b", "b");
    const big = cache.firstPage("big", 0, LEAD);
    expect(big?.bytes.toString("utf8")).toBe(expected("big", 0));
    expect(cache.keptBytes).toBe(0);
    const a = cache.firstPage("a", 0, LEAD);
    expect(cache.keptBytes).toBe(a?.bytes.length);
    const b = cache.firstPage("b", 0, LEAD);
    // Both would pass the total: the first was forgotten.
    expect(cache.keptBytes).toBe(b?.bytes.length);
    expect(cache.firstPage("a", 0, LEAD)?.bytes).not.toBe(a?.bytes);
  });
});
