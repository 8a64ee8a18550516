import { randomUUID } from "node:crypto";
import { describe, expect, it } from "vitest";
import { postRunWithKey as postRun } from "../daemon/api-shapes.js";
import { textReply } from "../support/scripted-llm-server.js";
import { useTestKit } from "../support/test-kit.js";

const kit = useTestKit();
const HOOK_SECRET = "bearer-hook-secret-value-0123456789";

// A trigger's run is made once per key (`webhook:<name>:<delivery>`, `after:<name>:<upstream run>`,
// `watch:<name>:<digest>`), in the same per-agent index as the API's Idempotency-Key. A caller of
// POST /agents/:id/runs (role `run`) who could write such a key would take the trigger's place: the
// delivery, or the end of the upstream run (its id is on every run list), would then be answered
// as a duplicate of the caller's run, and the trigger's own task would never run.
describe("an Idempotency-Key in a trigger's own form", { timeout: 90_000 }, () => {
  it("is refused at POST /agents/:id/runs, so a delivery still starts its own run", async () => {
    const llm = await kit.scriptedLlm();
    llm.setDefaultReply(textReply("done"));
    const project = kit.project({ llmUrl: llm.url, config: { vault: { backend: "env" } } });
    project.writeAgent("deployer", {
      triggers: [{ webhook: "release", secret: "{{secret:hook}}", signature: "bearer" }],
    });
    const daemon = await kit.daemon(project.configFile, {
      environment: { AGENTD_SECRET_HOOK: HOOK_SECRET },
    });

    const delivery = randomUUID();
    for (const key of [`webhook:release:${delivery}`, "after:review:r_0001", "watch:inbox:0123abcd"]) {
      const taken = await postRun(daemon, "deployer", key);
      expect(taken.status, key).toBe(400);
      expect(taken.body.error?.code).toBe("BAD_REQUEST");
    }
    // Another spelling is the caller's own key, as before.
    expect((await postRun(daemon, "deployer", "Webhook:release:1")).status).toBe(202);

    const response = await fetch(`${daemon.url}/hooks/deployer/release`, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        authorization: `Bearer ${HOOK_SECRET}`,
        "x-github-delivery": delivery,
      },
      body: JSON.stringify({ version: "1.2.3" }),
    });
    const answer = (await response.json()) as { run?: string; duplicate?: boolean };
    expect(response.status).toBe(202);
    expect(answer.duplicate).toBeUndefined();
    const run = await daemon.request("GET", `/runs/${answer.run ?? ""}`);
    expect((run.body as { trigger?: unknown }).trigger).toEqual({
      kind: "webhook",
      name: "release",
      id: delivery,
    });
  });
});
