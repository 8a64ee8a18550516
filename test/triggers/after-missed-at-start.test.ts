import { utimesSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { listRuns, startRun, waitForRunEnd } from "../daemon/api-shapes.js";
import { textReply } from "../support/scripted-llm-server.js";
import { useTestKit } from "../support/test-kit.js";
import { waitFor } from "../support/wait-for.js";

const kit = useTestKit();

describe("an upstream run whose end the daemon did not follow", () => {
  it(
    "starts its after run at the next start, once, and none for a trigger added since",
    { timeout: 120_000 },
    async () => {
      const { project } = await kit.scriptedProject(textReply("written"));
      project.writeAgent("writer", {});
      // Not served by the first daemon: as if it had been killed before it started the follower.
      project.writeAgent("checker", { enabled: false, triggers: [{ after: { agent: "writer" } }] });
      const first = await kit.daemon(project.configFile);
      const upstream = await waitForRunEnd(first, await startRun(first, "writer", "write"));
      await first.kill();
      // The checker as it was when the writer's run ended: served, its file older than that end.
      const checker = project.writeAgent("checker", { triggers: [{ after: { agent: "writer" } }] });
      const before = new Date(Date.parse(upstream.ended_at ?? "") - 60_000);
      utimesSync(checker, before, before);
      // An after trigger written after the end starts nothing for it.
      project.writeAgent("late", { triggers: [{ after: { agent: "writer" } }] });
      const second = await kit.daemon(project.configFile);
      const [follower] = await waitFor(async () => {
        const found = await listRuns(second, "?agent=checker");
        return found.length > 0 && found;
      }, "the checker's run");
      expect(follower?.trigger).toEqual({ kind: "after", name: "after-writer", id: upstream.id });
      await waitFor(
        () => second.stderr().includes("started the after runs a stop or a kill -9 left"),
        "the log",
      );
      expect(await listRuns(second, "?agent=late")).toEqual([]);
      await waitForRunEnd(second, follower?.id ?? "");
      await second.kill();
      const third = await kit.daemon(project.configFile);
      await waitFor(() => third.stderr().includes("no after run left unstarted"), "the third start's look");
      expect(await listRuns(third, "?agent=checker")).toHaveLength(1);
    },
  );
});
