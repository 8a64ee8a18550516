import { createHmac, randomUUID } from "node:crypto";
import { describe, expect, it } from "vitest";
import { textReply } from "../support/scripted-llm-server.js";
import { useTestKit } from "../support/test-kit.js";

const kit = useTestKit();
const SECRET = "restart-hook-secret-0123456789";

describe("webhook delivery ids", () => {
  // Two daemon starts: slow on a loaded machine.
  it(
    "are remembered across a kill -9: a repeated or replayed delivery answers its run",
    { timeout: 120_000 },
    async () => {
      const { project } = await kit.scriptedProject(textReply("done"), {
        config: { vault: { backend: "env" } },
      });
      project.writeAgent("reviewer", {
        triggers: [{ webhook: "pr", secret: "{{secret:hook}}", signature: "github" }],
      });
      const environment = { AGENTD_SECRET_HOOK: SECRET };
      const body = JSON.stringify({ action: "opened", number: 1 });
      const headers = {
        "content-type": "application/json",
        "x-github-delivery": randomUUID(),
        "x-hub-signature-256": `sha256=${createHmac("sha256", SECRET).update(body).digest("hex")}`,
      };
      const deliver = async (url: string, delivery = headers["x-github-delivery"]) => {
        const response = await fetch(`${url}/hooks/reviewer/pr`, {
          method: "POST",
          headers: { ...headers, "x-github-delivery": delivery },
          body,
        });
        return { status: response.status, body: (await response.json()) as Record<string, unknown> };
      };
      const daemon = await kit.daemon(project.configFile, { environment });
      const first = await deliver(daemon.url);
      expect(first.status).toBe(202);
      await daemon.kill();
      const restarted = await kit.daemon(project.configFile, { environment });
      expect(await deliver(restarted.url)).toEqual({
        status: 200,
        body: { run: first.body.run, status: expect.any(String), duplicate: true },
      });
      // A captured delivery replayed under a made-up id: GitHub does not sign the id, so the
      // signed body is what is recognised, after the restart too.
      expect(await deliver(restarted.url, randomUUID())).toEqual({
        status: 200,
        body: { run: first.body.run, status: expect.any(String), duplicate: true },
      });
    },
  );
});
