import { mkdirSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { textReply, toolCallReply } from "../support/scripted-llm-server.js";
import { getRun, runEvents, startRun } from "../daemon/api-shapes.js";
import { useTestKit } from "../support/test-kit.js";
import { waitFor } from "../support/wait-for.js";

const kit = useTestKit();
const SECRET = "dk-7f3a91c2e4b8d6f0";

/**
 * A checkpoint is masked with what the vault held when it was saved. A secret added to the vault
 * after that save and before the run resumes is masked in the resumed conversation too: the model
 * and the run's events never get it in plain.
 */
describe("a resumed run and a secret added since its checkpoint", () => {
  it("masks the checkpoint's copy of the value before the model sees it", async () => {
    const { llm, project } = await kit.scriptedProject(undefined, { config: { vault: { backend: "env" } } });
    mkdirSync(path.join(project.root, "work"));
    project.writeAgent("steady", {
      resume: true,
      workdir: "work",
      tools: ["write_file"],
      permissions: { allow: ["write_file"] },
    });
    // Round 1 writes the value (not yet a secret) in a tool call's arguments; round 2 never answers.
    llm.enqueue(toolCallReply({ name: "write_file", arguments: { path: "key.txt", content: SECRET } }));
    llm.setDefaultReply(() => ({ type: "hang" }));
    let daemon = await kit.daemon(project.configFile);
    const run = await startRun(daemon, "steady", "keep the key");
    await llm.waitForChatRequests(2, 30_000);
    await daemon.kill();

    llm.setDefaultReply(() => textReply("done"));
    const before = llm.chatRequests.length;
    daemon = await kit.daemon(project.configFile, { environment: { AGENTD_SECRET_DEPLOY_KEY: SECRET } });
    const record = await waitFor(
      async () => {
        const current = await getRun(daemon, run);
        return current.ended_at ? current : undefined;
      },
      `run ${run} to end`,
      30_000,
    );
    expect(record.status).toBe("completed");
    const resumed = JSON.stringify(llm.chatRequests.slice(before).map((request) => request.body));
    expect(resumed).toContain("[secret:deploy_key]");
    expect(resumed).not.toContain(SECRET);
    // The events from the resume on (those before it were written before the value was a secret).
    const events = await runEvents(daemon, run);
    const resumedAt = events.findIndex(
      (event) => event.type === "status" && "resumed_from_round" in event.data,
    );
    expect(resumedAt).toBeGreaterThan(0);
    expect(JSON.stringify(events.slice(resumedAt))).not.toContain(SECRET);
  });
});
