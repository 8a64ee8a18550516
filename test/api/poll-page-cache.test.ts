import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { EventBus } from "../../src/events/event-bus.js";
import { EventStore } from "../../src/events/event-store.js";
import { createLogger } from "../../src/logging/logger.js";
import { PollPageCache } from "../../src/api/poll-page-cache.js";

const logger = createLogger({ level: "silent", pretty: false });

describe("PollPageCache", () => {
  let dataDirectory: string | undefined;
  afterEach(() => {
    if (dataDirectory) rmSync(dataDirectory, { recursive: true, force: true });
  });

  it("answers the same page at the same version from what it kept, anything else anew", () => {
    const cache = new PollPageCache();
    let reads = 0;
    const read = (text: string) => () => {
      reads++;
      return { text, empty: text === "[]" };
    };
    const first = cache.body("a", 1, 0, 20, read("[1]"));
    expect(first.bytes.toString()).toBe("[1]");
    expect(cache.body("a", 1, 0, 20, read("never")).bytes).toBe(first.bytes);
    expect(reads).toBe(1);
    // Another version, cursor, limit or agent: read again.
    expect(cache.body("a", 2, 0, 20, read("[1,2]")).bytes.toString()).toBe("[1,2]");
    expect(cache.body("a", 2, 1, 20, read("[2]")).bytes.toString()).toBe("[2]");
    expect(cache.body("a", 2, 1, 5, read("[2]")).bytes.toString()).toBe("[2]");
    const empty = cache.body("b", 2, 1, 5, read("[]"));
    expect(empty.empty).toBe(true);
    expect(reads).toBe(5);
    expect(cache.keptBytes).toBe("[2]".length + "[]".length);
  });

  it("keeps no body above its largest size and forgets all past its total", () => {
    const cache = new PollPageCache({ largestBody: 4, totalBytes: 6 });
    const page = (text: string) => () => ({ text, empty: false });
    cache.body("big", 1, 0, 1, page("12345"));
    expect(cache.keptBytes).toBe(0);
    cache.body("a", 1, 0, 1, page("1234"));
    cache.body("b", 1, 0, 1, page("12"));
    expect(cache.keptBytes).toBe(6);
    cache.body("c", 1, 0, 1, page("123"));
    expect(cache.keptBytes).toBe(3);
    let read = false;
    cache.body("a", 1, 0, 1, () => ((read = true), { text: "1234", empty: false }));
    expect(read).toBe(true);
  });

  it("is kept in step with the store: its page version moves with each event of the agent", async () => {
    dataDirectory = mkdtempSync(path.join(tmpdir(), "agentd-poll-cache-"));
    const bus = new EventBus();
    const store = await EventStore.open({ dataDirectory, bufferSize: 2, bus, logger });
    const cache = new PollPageCache();
    const poll = (agent: string) =>
      cache
        .body(agent, store.pageVersion(agent), 0, 10, () => {
          const page = store.pollLines(agent, { after: 0, limit: 10 });
          return { text: JSON.stringify({ ids: page.ids, missed: page.missed }), empty: false };
        })
        .bytes.toString();
    expect(poll("a")).toBe('{"ids":[],"missed":0}');
    bus.publish({ agent: "a", run: null, type: "thought", data: { text: "one" } });
    expect(poll("a")).toBe('{"ids":[1],"missed":0}');
    const before = store.pageVersion("a");
    bus.publish({ agent: "b", run: null, type: "thought", data: { text: "other" } });
    expect(store.pageVersion("a")).toBe(before);
    bus.publish({ agent: "a", run: null, type: "thought", data: { text: "two" } });
    bus.publish({ agent: "a", run: null, type: "thought", data: { text: "three" } });
    // The ring holds 2: the oldest left it, which the page says.
    expect(poll("a")).toBe('{"ids":[2,3],"missed":1}');
    store.close();
  });
});
