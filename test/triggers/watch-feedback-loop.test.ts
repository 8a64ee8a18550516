import { mkdirSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { textReply } from "../support/scripted-llm-server.js";
import { useTestKit } from "../support/test-kit.js";
import { waitFor } from "../support/wait-for.js";

const kit = useTestKit();

interface TriggerState {
  agent: string;
  name: string;
  counts: { accepted: number; rate_limited: number };
}

// An agent whose runs write into the folder it watches — here through its own `file` delivery, no
// model needed; as well a model that follows a line it read in the file that started its run —
// starts a run, whose end writes the folder, which starts a run… A watch trigger's `rate_limit`
// (12 runs an hour unless the agent says otherwise) bounds what such a loop can spend.
describe("a watch trigger fed by its own agent's runs", { timeout: 120_000 }, () => {
  it("starts no more runs than its rate_limit allows, and says so in its health", async () => {
    const llm = await kit.scriptedLlm();
    llm.setDefaultReply(textReply("noted"));
    const project = kit.project({ llmUrl: llm.url });
    mkdirSync(path.join(project.root, "work", "out"), { recursive: true });
    project.writeAgent("logger", {
      workdir: "./work",
      deliver: [{ to: "file", path: "out/log.md" }],
      triggers: [
        { watch: { path: "out", debounce: "100ms" }, name: "out", rate_limit: { runs: 3, per: "1h" } },
      ],
    });
    const daemon = await kit.daemon(project.configFile);
    const started = await daemon.request("POST", "/agents/logger/runs", { task: "go" });
    expect(started.status).toBe(202);
    // Each run's end appends to out/log.md, which fires the trigger again: the fourth fire is refused.
    const state = await waitFor(async () => {
      const reply = await daemon.request("GET", "/triggers");
      const triggers = (reply.body as { triggers: TriggerState[] }).triggers;
      const out = triggers.find((trigger) => trigger.agent === "logger" && trigger.name === "out");
      return out !== undefined && out.counts.rate_limited > 0 ? out : undefined;
    }, "the trigger refused past its rate limit");
    expect(state.counts.accepted).toBe(3);
    const reply = await daemon.request("GET", "/runs?agent=logger");
    const runs = (reply.body as { runs: Array<{ trigger: { kind: string } }> }).runs;
    expect(runs.filter((run) => run.trigger.kind === "watch")).toHaveLength(3);
  });
});
