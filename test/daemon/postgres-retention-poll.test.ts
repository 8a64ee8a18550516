import { describe, expect, it } from "vitest";
import type { DaemonProcess } from "../support/daemon-process.js";
import { startPostgresCluster } from "../support/postgres-cluster.js";
import { postgresMissingReason } from "../support/postgres-server.js";
import { textReply } from "../support/scripted-llm-server.js";
import { useTestKit } from "../support/test-kit.js";
import { waitFor } from "../support/wait-for.js";
import { listRuns, startRun, waitForRunEnd } from "./api-shapes.js";

const missing = postgresMissingReason();

interface PollPage {
  events: Array<{ id: number }>;
  next: number;
  missed: number;
}

/**
 * Retention on the PostgreSQL store, seen by a client over HTTP (issue 26 item 6; the files
 * store's is test/retention/retention-pruning.test.ts): a node prunes at its start, and a poller
 * whose cursor lies in the pruned range is told how many events it missed and goes on, never
 * receiving an event twice nor an id given again.
 */
describe.skipIf(missing !== undefined)(
  "retention on PostgreSQL while a client polls",
  { timeout: 120_000 },
  () => {
    const kit = useTestKit();

    it("prunes past runs_per_agent at a node's start and reports the pruned range as missed", async () => {
      const cluster = await startPostgresCluster(kit, {
        nodes: 1,
        reply: textReply("done"),
        // A ring of two events per agent: the poller's cursor falls behind it and reads the database.
        config: () => ({ events: { buffer_size: 2 }, retention: { runs_per_agent: 2 } }),
        agents: (project) => project.writeAgent("keeper", {}),
      });
      let daemon = cluster.nodes[0] as DaemonProcess;
      const seen: number[] = [];
      let missed = 0;
      let cursor = 0;
      const pollOnce = async (): Promise<PollPage> => {
        const page = (await daemon.request("GET", `/agents/keeper/events?after=${cursor}&limit=2`))
          .body as PollPage;
        missed += page.missed;
        seen.push(...page.events.map((event) => event.id));
        cursor = page.next;
        return page;
      };
      const runs: string[] = [];
      const runOne = async (task: string) => {
        const run = await startRun(daemon, "keeper", task);
        expect(await waitForRunEnd(daemon, run)).toMatchObject({ status: "completed" });
        runs.push(run);
      };
      await runOne("one");
      await pollOnce();
      for (const task of ["two", "three", "four"]) await runOne(task);

      // The next start prunes: the two newest runs are kept. Killed as soon as the last run is
      // reported completed: reported, so committed (test/daemon/reported-end-kill.test.ts).
      await daemon.kill();
      daemon = await cluster.restart(0);
      await waitFor(
        async () => ((await listRuns(daemon, "?agent=keeper")).length === 2 ? true : undefined),
        "the prune",
      );
      expect((await listRuns(daemon, "?agent=keeper")).map((run) => run.id)).toEqual(
        runs.slice(-2).reverse(),
      );
      expect((await daemon.request("GET", `/runs/${runs[0]}`)).status).toBe(404);

      // The poller fell behind the pruned runs: told how many it missed, then it goes on.
      await pollOnce();
      expect(missed).toBeGreaterThan(0);
      await runOne("five");
      for (let page = await pollOnce(); page.events.length > 0; page = await pollOnce());
      // Every id up to the last is received or counted as missed: nothing twice, none given again.
      expect(new Set(seen).size).toBe(seen.length);
      expect(seen).toEqual([...seen].sort((left, right) => left - right));
      expect(seen.length + missed).toBe(seen.at(-1));
      const fifth = (await daemon.request("GET", `/runs/${runs.at(-1)}/events`)).body as {
        events: unknown[];
      };
      expect(fifth.events.length).toBeGreaterThan(2);
    });
  },
);
