import { describe, expect, it } from "vitest";
import { agentd } from "../support/agentd-cli.js";
import { useTestKit } from "../support/test-kit.js";

const kit = useTestKit();

describe("agentd validate", () => {
  it("warns about an agent whose webhook delivery posts to its own hook", { timeout: 60_000 }, async () => {
    const project = kit.project({ config: { vault: { backend: "env" } } });
    const hook = { webhook: "ci", secret: "{{secret:hook}}", signature: "standard" };
    project.writeAgent("echo", {
      triggers: [hook],
      deliver: [
        { to: "webhook", url: "https://agents.example.com/hooks/echo/ci", secret: "{{secret:hook}}" },
      ],
    });
    // Another agent's hook is no loop of its own.
    project.writeAgent("relay", {
      triggers: [{ ...hook, secret: "{{secret:relay_hook}}" }],
      deliver: [
        { to: "webhook", url: "https://agents.example.com/hooks/echo/ci", secret: "{{secret:hook}}" },
      ],
    });
    const key = `whsec_${Buffer.from("a-standard-webhooks-key-32-bytes").toString("base64")}`;
    const other = `whsec_${Buffer.from("another-standard-webhooks-key-32").toString("base64")}`;
    const result = await agentd(["validate", "--config", project.configFile, "--json"], {
      environment: { AGENTD_SECRET_HOOK: key, AGENTD_SECRET_RELAY_HOOK: other },
    });
    const report = JSON.parse(result.stdout) as { agents: Array<{ id: string; warnings: string[] }> };
    const warnings = (id: string) =>
      report.agents.find((agent) => agent.id === id)?.warnings.join("\n") ?? "";
    expect(warnings("echo")).toContain('echo: its webhook delivery posts to its own hook "ci"');
    expect(warnings("relay")).not.toContain("its own hook");
  });
});
