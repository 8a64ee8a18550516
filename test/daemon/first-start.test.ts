import { describe, expect, it } from "vitest";
import { useTestKit } from "../support/test-kit.js";
import { waitFor } from "../support/wait-for.js";
import { closedPort } from "../support/closed-port.js";

const kit = useTestKit();

describe("a first start without a model server", () => {
  it("says which endpoint and model it uses, that it does not answer, and what to do", async () => {
    const endpoint = `http://127.0.0.1:${await closedPort()}/v1`;
    const workspace = kit.project({ config: { llm: { base_url: endpoint, model: "llama3.1" } } });
    const running = await kit.daemon(workspace.configFile);
    const stderr = await waitFor(
      async () => (running.stderr().includes("does not answer") ? running.stderr() : undefined),
      "the warning about the silent model server",
    );
    expect(stderr).toContain(`LLM: model llama3.1 at ${endpoint}`);
    expect(stderr).toContain(`the LLM endpoint ${endpoint} does not answer`);
    expect(stderr).toContain("copy config.example.yaml to config.yaml and set llm.base_url and llm.model");
  });
});
