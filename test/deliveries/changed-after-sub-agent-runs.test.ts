import { describe, expect, it } from "vitest";
import { startRun, waitForRunEnd } from "../daemon/api-shapes.js";
import type { RecordedRequest, ScriptedReplyValue } from "../support/scripted-llm-server.js";
import { textReply, toolCallReply } from "../support/scripted-llm-server.js";
import { useTestKit } from "../support/test-kit.js";
import { waitFor } from "../support/wait-for.js";

const kit = useTestKit();
const SUB_AGENT_CALLS = 25;

/** The planner calls the digest as a sub-agent 25 times in one answer; the digest always says the same. */
function reply(request: RecordedRequest): ScriptedReplyValue {
  const body = request.body;
  const isPlanner = body?.tools?.some((tool) => tool.function.name === "agent__digest") ?? false;
  if (!isPlanner) return textReply("3 open issues");
  if (body?.messages.at(-1)?.role === "tool") return textReply("planned");
  return toolCallReply(
    Array.from({ length: SUB_AGENT_CALLS }, (_, index) => ({
      name: "agent__digest",
      arguments: { task: `part ${index}` },
    })),
  );
}

interface Delivery {
  run: string;
  when: string;
}

describe("a `changed` delivery", () => {
  it(
    "compares with the agent's previous run however many sub-agent runs of it came between",
    { timeout: 120_000 },
    async () => {
      const { project } = await kit.scriptedProject(reply);
      project.writeAgent("digest", {
        limits: { max_concurrent_runs: 30 },
        // Decided in this order: once a run's `always` delivery is listed, its `changed` one was decided.
        deliver: [
          { to: "file", path: "changes.txt", when: ["changed"] },
          { to: "file", path: "every-run.txt", when: ["always"] },
        ],
      });
      project.writeAgent("planner", { agents: ["digest"] });
      const daemon = await kit.daemon(project.configFile);
      const deliveries = async () =>
        ((await daemon.request("GET", "/deliveries?agent=digest")).body as { deliveries: Delivery[] })
          .deliveries;
      const first = await startRun(daemon, "digest", "count the issues");
      await waitForRunEnd(daemon, first);
      await waitFor(async () => (await deliveries()).length === 2, "the first run's deliveries");
      const planned = await waitForRunEnd(daemon, await startRun(daemon, "planner", "plan"));
      expect(planned.status).toBe("completed");
      const children = (await daemon.request("GET", `/runs?parent=${planned.id}&limit=100`)).body as {
        runs: unknown[];
      };
      expect(children.runs).toHaveLength(SUB_AGENT_CALLS);
      // The same result as the digest's previous run of its own: nothing changed, no `changed` delivery.
      const second = await startRun(daemon, "digest", "count the issues");
      await waitForRunEnd(daemon, second);
      await waitFor(
        async () => (await deliveries()).some((delivery) => delivery.run === second),
        "the second run's deliveries decided",
      );
      const changed = (await deliveries()).filter((delivery) => delivery.when === "changed");
      expect(changed.map((delivery) => delivery.run)).toEqual([first]);
    },
  );
});
