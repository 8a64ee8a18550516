import { describe, expect, it } from "vitest";
import { validateProject } from "../../src/cli/commands/validate.js";
import { useTestKit } from "../support/test-kit.js";

const kit = useTestKit();

describe("agentd validate and deliveries", () => {
  it("refuses an unknown template variable, an unknown target and a secret the vault lacks", async () => {
    const project = kit.project({
      config: {
        vault: { backend: "env" },
        deliveries: { targets: { team: { to: "slack", url: "https://hooks.example/x" } } },
      },
    });
    project.writeAgent("typo", {
      deliver: [{ to: "slack", url: "https://hooks.example/y", template: "{{agnet}} done" }],
    });
    project.writeAgent("unknown", { deliver: ["teem"] });
    project.writeAgent("secretless", {
      deliver: [{ to: "telegram", token: "{{secret:bot_token}}", chat_id: 1 }],
    });
    project.writeAgent("fine", {
      deliver: ["team", { to: "file", path: "out.md", when: ["failure", "changed"] }],
    });
    const { report } = await validateProject({ config: project.configFile, environment: {} });
    const byId = Object.fromEntries(report.agents.map((agent) => [agent.id, agent]));
    expect(byId["fine"]?.valid).toBe(true);
    expect(JSON.stringify(byId["typo"]?.errors)).toContain('unknown template variable \\"{{agnet}}\\"');
    expect(JSON.stringify(byId["unknown"]?.errors)).toContain('unknown delivery target \\"teem\\"');
    expect(byId["secretless"]?.errors).toEqual([
      expect.objectContaining({
        code: "SECRET_NOT_FOUND",
        message: 'deliver: secret "bot_token" is not in the vault',
      }),
    ]);
    const withSecret = await validateProject({
      config: project.configFile,
      environment: { AGENTD_SECRET_BOT_TOKEN: "123:abc" },
    });
    expect(withSecret.report.agents.find((agent) => agent.id === "secretless")?.valid).toBe(true);
  });
});
