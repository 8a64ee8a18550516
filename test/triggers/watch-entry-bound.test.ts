import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, expect, it } from "vitest";
import { TriggerSet } from "../../src/triggers/trigger-set.js";
import { makeDefinition } from "../support/make-definition.js";
import { ManualClock } from "../support/manual-clock.js";
import { waitFor } from "../support/wait-for.js";
import { watchTriggersOn } from "../support/watch-trigger-harness.js";

const folders: string[] = [];
afterEach(() => {
  for (const folder of folders.splice(0)) rmSync(folder, { recursive: true, force: true });
});

/**
 * A process that can write into a watched folder (an agent's sandbox, whatever a hostile page told
 * it) could fill it with a million empty files: the daemon's watcher keeps a few KB per entry and
 * stats each, so memory and the event loop would go with them. A trigger watches a bounded number
 * of entries; past it, new ones are not watched and its health says why.
 */
it("watches a bounded number of entries and says so when a folder holds more", async () => {
  const root = mkdtempSync(path.join(tmpdir(), "agentd-watch-bound-"));
  folders.push(root);
  mkdirSync(path.join(root, "inbox"));
  const clock = new ManualClock(Date.parse("2026-03-01T09:00:00Z"));
  const definition = makeDefinition({
    id: "watcher",
    workdir: root,
    frontmatter: { triggers: [{ watch: { path: "inbox", glob: "**/*", debounce: "1s" }, name: "inbox" }] },
  });
  const { watches, health } = watchTriggersOn(clock, { maxEntries: 20 });
  try {
    await watches.apply(new TriggerSet([definition]).watches);
    for (let index = 0; index < 60; index++) writeFileSync(path.join(root, "inbox", `f${index}.txt`), "");
    await waitFor(() => health.of("watcher", "inbox").last_error !== null, "the bound reported");
    expect(health.of("watcher", "inbox").last_error).toContain("more than 20 entries");
    expect(watches.pendingPaths()).toBeLessThanOrEqual(20);
  } finally {
    await watches.close();
  }
});
