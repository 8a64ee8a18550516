import { mkdirSync, mkdtempSync, renameSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { FOLDER_RETURN_CHECK_MILLISECONDS } from "../../src/triggers/folder-return.js";
import { TriggerSet } from "../../src/triggers/trigger-set.js";
import { ManualClock } from "../support/manual-clock.js";
import { waitFor } from "../support/wait-for.js";
import { inboxWatcher, watchTriggersOn } from "../support/watch-trigger-harness.js";

const folders: string[] = [];
afterEach(() => {
  for (const folder of folders.splice(0)) rmSync(folder, { recursive: true, force: true });
});

/** A fresh folder `inbox`, its watch trigger and the trigger harness on a manual clock. */
function inboxUnderWatch() {
  const root = mkdtempSync(path.join(tmpdir(), "agentd-watch-return-"));
  folders.push(root);
  const clock = new ManualClock(Date.parse("2026-03-01T09:00:00Z"));
  const triggers = new TriggerSet([inboxWatcher(root, { runs: 100, per: "1h" })]);
  return { root, inbox: path.join(root, "inbox"), clock, triggers, ...watchTriggersOn(clock) };
}

/**
 * A tool that rotates the watched folder (`mv inbox inbox.1 && mkdir inbox`), or a person who
 * removes and recreates it, must not leave the trigger deaf until the daemon restarts.
 */
describe("a watch trigger whose folder is renamed or removed", { timeout: 30_000 }, () => {
  it.each([
    ["renamed", (folder: string) => renameSync(folder, `${folder}.1`)],
    ["removed", (folder: string) => rmSync(folder, { recursive: true })],
  ])("says so when it is %s, and watches it again once it is back", async (_how, takeAway) => {
    const { inbox, clock, triggers, watches, health, started } = inboxUnderWatch();
    try {
      await watches.apply(triggers.watches);
      takeAway(inbox);
      await waitFor(() => health.of("watcher", "inbox").last_outcome === "failed", "the loss reported");
      expect(health.of("watcher", "inbox").last_error).toContain(
        `the folder ${inbox} was removed or renamed`,
      );
      expect(watches.watches("watcher/inbox")).toBe(false);

      // Back, with a file already in it before the daemon looks again: it counts as added.
      mkdirSync(inbox);
      writeFileSync(path.join(inbox, "early.txt"), "e");
      clock.advanceBy(FOLDER_RETURN_CHECK_MILLISECONDS);
      await waitFor(() => watches.watches("watcher/inbox") && watches.pendingPaths() === 1, "watched again");
      clock.advanceBy(1_000);
      await waitFor(() => started.length === 1, "the run of the file made while it was away");
      expect(started[0]?.task).toBe("Files: early.txt");

      writeFileSync(path.join(inbox, "later.txt"), "l");
      await waitFor(() => watches.pendingPaths() === 1, "a later change seen");
      clock.advanceBy(1_000);
      await waitFor(() => started.length === 2, "the run of the later change");
      expect(started[1]?.task).toBe("Files: later.txt");
    } finally {
      await watches.close();
    }
  });

  it("keeps looking while a file stands at the folder's path, and watches a link to a folder", async () => {
    const { root, inbox, clock, triggers, watches, health, started } = inboxUnderWatch();
    try {
      await watches.apply(triggers.watches);
      renameSync(inbox, `${inbox}.1`);
      await waitFor(() => health.of("watcher", "inbox").last_outcome === "failed", "the loss reported");

      // A file where the folder was is no folder to watch: still looked for, nothing started.
      writeFileSync(inbox, "not a folder");
      clock.advanceBy(FOLDER_RETURN_CHECK_MILLISECONDS * 3);
      expect(watches.watches("watcher/inbox")).toBe(false);
      expect(health.of("watcher", "inbox").last_outcome).toBe("failed");

      // Then a link to a folder, as at a start: the folder it names is watched.
      rmSync(inbox);
      const elsewhere = path.join(root, "elsewhere");
      mkdirSync(elsewhere);
      writeFileSync(path.join(elsewhere, "waiting.txt"), "w");
      symlinkSync(elsewhere, inbox);
      clock.advanceBy(FOLDER_RETURN_CHECK_MILLISECONDS);
      await waitFor(
        () => watches.watches("watcher/inbox") && watches.pendingPaths() === 1,
        "the link watched",
      );
      clock.advanceBy(1_000);
      await waitFor(() => started.length === 1, "the run of the file in the linked folder");
      expect(started[0]?.task).toBe("Files: waiting.txt");
    } finally {
      await watches.close();
    }
    expect(clock.pending).toBe(0);
  });

  it.each([
    ["empty", false],
    ["holding a file", true],
  ])(
    "watches the new folder when the %s one is rotated at once (mv inbox inbox.1 && mkdir inbox)",
    async (_how, holding) => {
      const { inbox, clock, triggers, watches, started } = inboxUnderWatch();
      try {
        if (holding) writeFileSync(path.join(inbox, "old.txt"), "o");
        await watches.apply(triggers.watches);
        renameSync(inbox, `${inbox}.1`);
        mkdirSync(inbox);
        // The rotation is seen whenever it is; the new folder's file must start a run, at the latest
        // once the daemon looked for the folder again.
        writeFileSync(path.join(inbox, "new.txt"), "n");
        await waitFor(
          () => {
            clock.advanceBy(FOLDER_RETURN_CHECK_MILLISECONDS);
            return started.length > 0;
          },
          "a run of the file in the new folder",
          10_000,
        );
        expect(started[0]?.task).toBe("Files: new.txt");
      } finally {
        await watches.close();
      }
    },
  );

  it("stops looking for the folder once its trigger is gone", async () => {
    const { inbox, clock, triggers, watches, health, started } = inboxUnderWatch();
    try {
      await watches.apply(triggers.watches);
      rmSync(inbox, { recursive: true });
      await waitFor(() => health.of("watcher", "inbox").last_outcome === "failed", "the loss reported");
      await watches.apply([]);
      mkdirSync(inbox);
      writeFileSync(path.join(inbox, "late.txt"), "l");
      clock.advanceBy(FOLDER_RETURN_CHECK_MILLISECONDS * 2);
      clock.advanceBy(1_000);
      expect(watches.watches("watcher/inbox")).toBe(false);
      expect(started).toEqual([]);
    } finally {
      await watches.close();
    }
  });
});
