import { describe, expect, it } from "vitest";
import { agentd } from "../support/agentd-cli.js";
import { useTestKit } from "../support/test-kit.js";

const kit = useTestKit();

describe("agentd validate and agentd triggers", () => {
  // Two CLI processes, each loading every agent: slow on a loaded machine.
  it(
    "report unknown variables, a webhook without a secret, a secret missing from the vault, cycles",
    { timeout: 120_000 },
    async () => {
      const project = kit.project({ config: { vault: { backend: "env" } } });
      project.writeAgent("reviewer", {
        triggers: [
          {
            webhook: "pr",
            secret: "{{secret:present}}",
            signature: "github",
            task: "Review {{payload.url}}",
          },
          { webhook: "std", secret: "{{secret:missing_one}}", signature: "standard" },
        ],
      });
      project.writeAgent("typo", {
        triggers: [
          { webhook: "pr", secret: "{{secret:present}}", signature: "github", task: "{{upstream.result}}" },
        ],
      });
      // Shares reviewer's secret: a delivery captured at one hook would verify at the other.
      project.writeAgent("mirror", {
        triggers: [{ webhook: "push", secret: "{{secret:present}}", signature: "github" }],
      });
      project.writeAgent("bare", { triggers: [{ webhook: "pr", signature: "bearer" }] });
      project.writeAgent("literal", {
        triggers: [{ webhook: "pr", signature: "bearer", secret: "hunter2" }],
      });
      project.writeAgent("ping", { triggers: [{ after: { agent: "pong" } }] });
      project.writeAgent("pong", { triggers: [{ after: { agent: "ping" } }, { after: { agent: "pnig" } }] });
      const environment = { AGENTD_SECRET_PRESENT: "value" };
      const result = await agentd(["validate", "--config", project.configFile, "--json"], { environment });
      expect(result.exitCode).toBe(1);
      const report = JSON.parse(result.stdout) as {
        agents: Array<{
          id: string;
          valid: boolean;
          errors: Array<{ code: string; message: string; field?: string }>;
          warnings: string[];
        }>;
      };
      const agent = (id: string) => report.agents.find((entry) => entry.id === id);
      expect(agent("reviewer")).toMatchObject({
        valid: false,
        errors: [{ code: "SECRET_NOT_FOUND", field: "triggers[1].secret" }],
      });
      expect(agent("typo")?.errors[0]?.message).toContain("unknown template variable {{upstream.result}}");
      expect(agent("bare")?.errors[0]?.message).toContain(
        "a webhook trigger needs secret: {{secret:<name>}}",
      );
      expect(agent("literal")?.errors[0]?.message).toContain("secret must be a vault reference");
      expect(agent("pong")).toMatchObject({
        valid: false,
        errors: [
          { field: "triggers[1].after.agent", message: expect.stringContaining('unknown agent "pnig"') },
        ],
      });
      expect(agent("reviewer")?.warnings.join("\n")).toContain(
        'the webhook "pr" shares its secret with the webhook "push" of mirror',
      );
      expect(agent("mirror")?.warnings.join("\n")).toContain(
        'the webhook "push" shares its secret with the webhook "pr" of reviewer',
      );
      expect(agent("ping")?.warnings.join("\n")).toContain(
        "after triggers form a cycle (ping → pong → ping)",
      );

      const listed = await agentd(["triggers", "--config", project.configFile], { environment });
      expect(listed.exitCode).toBe(0);
      expect(listed.stdout).toContain(
        "reviewer  webhook  pr  POST /hooks/reviewer/pr (github, secret present",
      );
      expect(listed.stdout).toContain("ping  after    after-pong  after pong: completed");
    },
  );
});
