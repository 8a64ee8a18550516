import { mkdtempSync, rmSync, unlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, expect, it } from "vitest";
import type { RateLimit, RateVerdict, TriggerRateLimit } from "../../src/triggers/delivery-rate-limit.js";
import { TriggerSet } from "../../src/triggers/trigger-set.js";
import { ManualClock } from "../support/manual-clock.js";
import { waitFor } from "../support/wait-for.js";
import { inboxWatcher, watchTriggersOn } from "../support/watch-trigger-harness.js";

const folders: string[] = [];
afterEach(() => {
  for (const folder of folders.splice(0)) rmSync(folder, { recursive: true, force: true });
});

/** A fresh folder with an inbox watched at `runs` starts an hour, and the clock its test drives. */
function watchedInbox(runs: number) {
  const root = mkdtempSync(path.join(tmpdir(), "agentd-watch-"));
  folders.push(root);
  const definition = inboxWatcher(root, { runs, per: "1h" });
  return { root, definition, clock: new ManualClock(Date.parse("2026-03-01T09:00:00Z")) };
}

/** A cluster's rate limit whose answers come when the test says (its store is slow). */
class SlowRateLimit implements TriggerRateLimit {
  readonly waiting: Array<(verdict: RateVerdict) => void> = [];
  readonly givenBack: string[] = [];
  #taken = 0;
  take(_key: string, _limit: RateLimit): Promise<RateVerdict> {
    return new Promise((resolve) => this.waiting.push(resolve));
  }
  allowNext(): void {
    this.waiting.shift()?.({ allowed: true, start: `cluster:${++this.#taken}` });
  }
  giveBack(_key: string, start: string): Promise<void> {
    this.givenBack.push(start);
    return Promise.resolve();
  }
}

/**
 * While one start is being counted (a cluster's store answers slowly), a later change fires the
 * debounce again: the first start takes every waiting path, and the second must not start a run
 * with none, costing one of the hour's starts.
 */
it("starts no run without paths when a second count was asked while the first was answered", async () => {
  const { root, definition, clock } = watchedInbox(12);
  const rateLimit = new SlowRateLimit();
  const { watches, started } = watchTriggersOn(clock, { rateLimit });
  try {
    await watches.apply(new TriggerSet([definition]).watches);
    writeFileSync(path.join(root, "inbox", "a.txt"), "a");
    await waitFor(() => watches.pendingPaths() === 1, "the first change seen");
    clock.advanceBy(1_000);
    await waitFor(() => rateLimit.waiting.length === 1, "the first start being counted");
    writeFileSync(path.join(root, "inbox", "b.txt"), "b");
    await waitFor(() => watches.pendingPaths() === 2, "the second change seen");
    clock.advanceBy(1_000);
    await waitFor(() => rateLimit.waiting.length === 2, "the second start being counted");
    rateLimit.allowNext();
    await waitFor(() => started.length === 1, "the run started");
    rateLimit.allowNext();
    await waitFor(() => rateLimit.givenBack.length === 1, "the unused start given back");
    expect(started.map((run) => run.task)).toEqual(["Files: a.txt\nb.txt"]);
  } finally {
    await watches.close();
  }
});

/**
 * Past the rate limit the changed paths wait up to the window: files made and removed meanwhile
 * (an agent's scratch files, by the million) must not each leave their name waiting, or memory
 * grows without bound; a removed file has nothing to read anyway.
 */
it("forgets a waiting path once its file is removed, so waiting names stay bounded", async () => {
  const { root, definition, clock } = watchedInbox(1);
  const { watches, health, started } = watchTriggersOn(clock);
  try {
    await watches.apply(new TriggerSet([definition]).watches);
    writeFileSync(path.join(root, "inbox", "first.txt"), "a");
    await waitFor(() => watches.pendingPaths() === 1, "the first change seen");
    clock.advanceBy(1_000);
    await waitFor(() => started.length === 1, "the hour's one run started");
    writeFileSync(path.join(root, "inbox", "kept.txt"), "k");
    for (let index = 0; index < 5; index += 1) {
      const scratch = path.join(root, "inbox", `scratch-${index}.txt`);
      writeFileSync(scratch, "s");
      await waitFor(() => watches.pendingPaths() >= 2, "a scratch file seen");
      unlinkSync(scratch);
      await waitFor(() => watches.pendingPaths() === 1, "the removed scratch file forgotten");
    }
    clock.advanceBy(1_000);
    await waitFor(() => health.of("watcher", "inbox").counts.rate_limited === 1, "the start refused");
    clock.advanceBy(60 * 60_000);
    await waitFor(() => started.length === 2, "the waiting change started a run");
    expect(started[1]?.task).toBe("Files: kept.txt");
  } finally {
    await watches.close();
  }
});

/**
 * Past the rate limit, changed paths wait up to the whole window; an edit of the agent file
 * meanwhile (its prompt, say) replaces the watcher, and the paths waiting must go on waiting in the
 * new one rather than vanish ("past the limit nothing is lost").
 */
it("keeps the paths waiting past the rate limit when the agent's definition changes", async () => {
  const { root, definition, clock } = watchedInbox(1);
  const edited = { ...definition, hash: `${definition.hash}-edited`, instructions: "Edited." };
  const { watches, health, started } = watchTriggersOn(clock);
  try {
    await watches.apply(new TriggerSet([definition]).watches);
    writeFileSync(path.join(root, "inbox", "first.txt"), "a");
    await waitFor(() => watches.pendingPaths() === 1, "the first change seen");
    clock.advanceBy(1_000);
    await waitFor(() => started.length === 1, "the hour's one run started");
    writeFileSync(path.join(root, "inbox", "waiting.txt"), "w");
    await waitFor(() => watches.pendingPaths() === 1, "the second change seen");
    clock.advanceBy(1_000);
    await waitFor(() => health.of("watcher", "inbox").counts.rate_limited === 1, "the start refused");
    await watches.apply(new TriggerSet([edited]).watches);
    expect(watches.pendingPaths()).toBe(1);
    clock.advanceBy(1_000);
    await waitFor(() => health.of("watcher", "inbox").counts.rate_limited === 2, "refused again");
    clock.advanceBy(60 * 60_000);
    await waitFor(() => started.length === 2, "the waiting change started a run");
    expect(started[1]?.task).toBe("Files: waiting.txt");
  } finally {
    await watches.close();
  }
});
