import { appendFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { listRuns, startRun, waitForRunEnd } from "../daemon/api-shapes.js";
import { textReply } from "../support/scripted-llm-server.js";
import { useTestKit } from "../support/test-kit.js";

const kit = useTestKit();

describe("an upstream run whose end the daemon did not follow", () => {
  it(
    "starts its after runs at the next start, once, with the triggers as they are then",
    { timeout: 120_000 },
    async () => {
      const { project } = await kit.scriptedProject(textReply("written"));
      project.writeAgent("writer", {});
      // Not served by the first daemon: as if it had been killed before it started the follower.
      project.writeAgent("checker", { enabled: false, triggers: [{ after: { agent: "writer" } }] });
      const first = await kit.daemon(project.configFile);
      const upstream = await waitForRunEnd(first, await startRun(first, "writer", "write"));
      await first.kill();
      // What a kill -9 in the moment after the writer's end was written leaves: the run ended, no
      // follower recorded, the run still owed its followers in the journal.
      const journal = path.join(project.dataDirectory, "follow-ups", "after-triggers.jsonl");
      appendFileSync(journal, `${JSON.stringify({ owed: upstream.id })}\n`);
      project.writeAgent("checker", { triggers: [{ after: { agent: "writer" } }] });
      // An after trigger written after the end counts too: the triggers are taken as they are now.
      project.writeAgent("late", { triggers: [{ after: { agent: "writer" } }] });
      const second = await kit.daemon(project.configFile);
      // Started before the API serves.
      const [follower] = await listRuns(second, "?agent=checker");
      expect(follower?.trigger).toEqual({ kind: "after", name: "after-writer", id: upstream.id });
      const [late] = await listRuns(second, "?agent=late");
      expect(late?.trigger).toEqual({ kind: "after", name: "after-writer", id: upstream.id });
      await waitForRunEnd(second, follower?.id ?? "");
      await waitForRunEnd(second, late?.id ?? "");
      await second.kill();
      const third = await kit.daemon(project.configFile);
      expect(await listRuns(third, "?agent=checker")).toHaveLength(1);
      expect(await listRuns(third, "?agent=late")).toHaveLength(1);
    },
  );
});
