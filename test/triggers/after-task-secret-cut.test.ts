import { describe, expect, it } from "vitest";
import { listRuns, startRun, waitForRunEnd } from "../daemon/api-shapes.js";
import { textReply } from "../support/scripted-llm-server.js";
import { useTestKit } from "../support/test-kit.js";
import { waitFor } from "../support/wait-for.js";

const kit = useTestKit();
const SECRET = "deploy-key-0f3a9c27b1e54d68";

describe("an after trigger's task", () => {
  it(
    "shows none of a secret the 16,384-character cut of the upstream result falls inside",
    { timeout: 90_000 },
    async () => {
      // The writer's answer holds the secret across the cut: 16,370 characters, then the value.
      const result = `${"x".repeat(16_370)}${SECRET} and more`;
      const { project } = await kit.scriptedProject(textReply(result), {
        config: { vault: { backend: "env" } },
      });
      project.writeAgent("writer", { limits: { max_tokens: 1_000_000 } });
      project.writeAgent("checker", {
        triggers: [{ after: { agent: "writer" }, task: "Check: {{upstream.result}}" }],
      });
      const daemon = await kit.daemon(project.configFile, {
        environment: { AGENTD_SECRET_DEPLOY_KEY: SECRET },
      });
      await waitForRunEnd(daemon, await startRun(daemon, "writer", "write"));
      const [follower] = await waitFor(async () => {
        const found = await listRuns(daemon, "?agent=checker");
        return found.length > 0 && found;
      }, "the checker's run");
      const task = follower?.task ?? "";
      expect(task).toMatch(/cut at 16384 characters/);
      expect(task).not.toContain(SECRET.slice(0, 8));
      const stored = ((await daemon.request("GET", `/runs/${follower?.id}`)).body as { task: string }).task;
      expect(stored).not.toContain(SECRET.slice(0, 8));
    },
  );
});
