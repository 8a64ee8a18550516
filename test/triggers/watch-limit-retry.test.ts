import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { watch } from "chokidar";
import { afterEach, describe, expect, it } from "vitest";
import { TriggerSet } from "../../src/triggers/trigger-set.js";
import { WATCH_LIMIT_RETRY_MILLISECONDS } from "../../src/triggers/watch-triggers.js";
import { ManualClock } from "../support/manual-clock.js";
import { waitFor } from "../support/wait-for.js";
import { inboxWatcher, watchTriggersOn } from "../support/watch-trigger-harness.js";

const folders: string[] = [];
afterEach(() => {
  for (const folder of folders.splice(0)) rmSync(folder, { recursive: true, force: true });
});

/**
 * chokidar's watch, whose first `failures` watchers meet the system's limit of watched files as
 * the kernel answers it (a sandboxed command used up the user's `fs.inotify.max_user_watches`):
 * the watcher reports ENOSPC, as chokidar does when `fs.watch` throws it, and sees nothing.
 */
function watchFailing(failures: number): { watchFolder: typeof watch; made: () => number } {
  let made = 0;
  const watchFolder: typeof watch = (paths, options) => {
    made += 1;
    const watcher = watch(made <= failures ? [] : paths, options);
    if (made <= failures) queueMicrotask(() => watcher.emit("error", limitError(String(paths))));
    return watcher;
  };
  return { watchFolder, made: () => made };
}

/** The error chokidar reports when `fs.watch(file)` meets the limit. */
function limitError(file: string): NodeJS.ErrnoException {
  return Object.assign(
    new Error(`ENOSPC: System limit for number of file watchers reached, watch '${file}'`),
    { code: "ENOSPC", path: file },
  );
}

describe(
  "a watch trigger whose watcher meets the system's limit of watched files",
  { timeout: 30_000 },
  () => {
    it("says so and watches its folder again, until the limit lets it, instead of staying deaf", async () => {
      const root = mkdtempSync(path.join(tmpdir(), "agentd-watch-limit-"));
      folders.push(root);
      const clock = new ManualClock(Date.parse("2026-03-01T09:00:00Z"));
      const failing = watchFailing(2);
      const { watches, health, started } = watchTriggersOn(clock, { watchFolder: failing.watchFolder });
      try {
        await watches.apply(new TriggerSet([inboxWatcher(root, { runs: 100, per: "1h" })]).watches);
        await waitFor(() => health.of("watcher", "inbox").last_outcome === "failed", "the limit reported");
        expect(health.of("watcher", "inbox").last_error).toContain("fs.inotify.max_user_watches");
        expect(health.of("watcher", "inbox").last_error).toContain(
          `watched again in ${WATCH_LIMIT_RETRY_MILLISECONDS / 1_000} s`,
        );
        expect(watches.watches("watcher/inbox")).toBe(false);

        // Still at the limit at the first try; free at the second.
        clock.advanceBy(WATCH_LIMIT_RETRY_MILLISECONDS);
        await waitFor(
          () => failing.made() === 2 && !watches.watches("watcher/inbox"),
          "the second try failed",
        );
        clock.advanceBy(WATCH_LIMIT_RETRY_MILLISECONDS);
        await waitFor(() => watches.watches("watcher/inbox"), "watched again");
        writeFileSync(path.join(root, "inbox", "after.txt"), "a");
        await waitFor(() => watches.pendingPaths() === 1, "the change seen");
        clock.advanceBy(1_000);
        await waitFor(() => started.length === 1, "the run of the change");
        expect(started[0]?.task).toBe("Files: after.txt");
        expect(failing.made()).toBe(3);
      } finally {
        await watches.close();
      }
    });

    it("keeps a watcher that missed only a file below its folder, which still sees the rest", async () => {
      const root = mkdtempSync(path.join(tmpdir(), "agentd-watch-limit-"));
      folders.push(root);
      const clock = new ManualClock(Date.parse("2026-03-01T09:00:00Z"));
      let made = 0;
      const watchFolder: typeof watch = (paths, options) => {
        made += 1;
        const watcher = watch(paths, options);
        watcher.once("ready", () => watcher.emit("error", limitError(path.join(String(paths), "deep"))));
        return watcher;
      };
      const { watches, health, started } = watchTriggersOn(clock, { watchFolder });
      try {
        await watches.apply(new TriggerSet([inboxWatcher(root, { runs: 100, per: "1h" })]).watches);
        expect(watches.watches("watcher/inbox")).toBe(true);
        writeFileSync(path.join(root, "inbox", "seen.txt"), "s");
        await waitFor(() => watches.pendingPaths() === 1, "the change seen");
        clock.advanceBy(WATCH_LIMIT_RETRY_MILLISECONDS);
        await waitFor(() => started.length === 1, "the run of the change");
        expect(made).toBe(1);
        expect(health.of("watcher", "inbox").last_outcome).toBe("accepted");
      } finally {
        await watches.close();
      }
    });

    it("stops trying once closed", async () => {
      const root = mkdtempSync(path.join(tmpdir(), "agentd-watch-limit-"));
      folders.push(root);
      const clock = new ManualClock(Date.parse("2026-03-01T09:00:00Z"));
      const failing = watchFailing(1);
      const { watches, health } = watchTriggersOn(clock, { watchFolder: failing.watchFolder });
      await watches.apply(new TriggerSet([inboxWatcher(root, { runs: 100, per: "1h" })]).watches);
      await waitFor(() => health.of("watcher", "inbox").last_outcome === "failed", "the limit reported");
      await watches.close();
      clock.advanceBy(WATCH_LIMIT_RETRY_MILLISECONDS * 3);
      expect(failing.made()).toBe(1);
      expect(watches.watches("watcher/inbox")).toBe(false);
    });
  },
);
