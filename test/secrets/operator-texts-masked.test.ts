import { describe, expect, it } from "vitest";
import { agentd } from "../support/agentd-cli.js";
import { textReply } from "../support/scripted-llm-server.js";
import { useTestKit } from "../support/test-kit.js";
import { startRun, waitForRunEnd } from "../daemon/api-shapes.js";

const kit = useTestKit();

const VALUE = "opText-Secret-7e2a9c41d0";

describe("operator-written texts a model or an API reader sees", () => {
  it(
    "mask a vault value in a sub-agent's description, a preset's rules, GET /agents and /triggers",
    { timeout: 90_000 },
    async () => {
      const { llm, project } = await kit.scriptedProject(textReply("ok"));
      const set = await agentd(["secrets", "set", "token"], { cwd: project.root, input: VALUE });
      expect(set.exitCode, set.stderr).toBe(0);
      project.writePreset(
        "careful.yaml",
        `role: Careful\ncritical_rules: [Never print ${VALUE}]\nsuccess_metrics: [Used ${VALUE} once]\n`,
      );
      project.writeAgent("child.md", `---\nname: child\ndescription: Deploys with ${VALUE}\n---\nDeploy.\n`);
      project.writeAgent(
        "parent.md",
        [
          "---",
          "name: parent",
          "description: Leads",
          "preset: careful",
          "agents: [child]",
          "triggers:",
          "  - webhook: push",
          '    secret: "{{secret:token}}"',
          "    signature: bearer",
          `    filter: { ref: ${VALUE} }`,
          "---",
          "Lead.",
          "",
        ].join("\n"),
      );
      const daemon = await kit.daemon(project.configFile);
      await waitForRunEnd(daemon, await startRun(daemon, "parent", "lead"));

      const request = llm.chatRequests[0]?.body;
      const tool = request?.tools?.find((offered) => offered.function.name === "agent__child");
      expect(tool?.function.description).toContain("Deploys with [secret:token]");
      const system = String(request?.messages.find((message) => message.role === "system")?.content);
      expect(system).toContain(`- Never print [secret:token]`);
      expect(system).toContain(`- Used [secret:token] once`);
      expect(JSON.stringify(request)).not.toContain(VALUE);

      // Any read token lists the agents: the description shows as the model reads it.
      const list = JSON.stringify((await daemon.request("GET", "/agents")).body);
      expect(list).toContain("Deploys with [secret:token]");
      expect(list).not.toContain(VALUE);
      const detail = JSON.stringify((await daemon.request("GET", "/agents/child")).body);
      expect(detail).toContain("Deploys with [secret:token]");
      expect(detail).not.toContain(VALUE);
      const triggers = JSON.stringify((await daemon.request("GET", "/triggers")).body);
      expect(triggers).toContain('filter {\\"ref\\":\\"[secret:token]\\"}');
      expect(triggers).not.toContain(VALUE);
    },
  );

  it("mask a vault value a webhook's payload fills into its task template", { timeout: 90_000 }, async () => {
    const { llm, project } = await kit.scriptedProject(textReply("ok"));
    const set = await agentd(["secrets", "set", "token"], { cwd: project.root, input: VALUE });
    expect(set.exitCode, set.stderr).toBe(0);
    project.writeAgent(
      "deployer.md",
      [
        "---",
        "name: deployer",
        "description: Deploys",
        "triggers:",
        "  - webhook: push",
        '    secret: "{{secret:token}}"',
        "    signature: bearer",
        '    task: "Deploy {{payload.ref}} for {{payload.who}}"',
        "---",
        "Deploy.",
        "",
      ].join("\n"),
    );
    const daemon = await kit.daemon(project.configFile);
    const response = await fetch(`${daemon.url}/hooks/deployer/push`, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${VALUE}` },
      body: JSON.stringify({ ref: `main ${VALUE}`, who: "ops" }),
    });
    expect(response.status).toBe(202);
    const { run } = (await response.json()) as { run: string };
    await waitForRunEnd(daemon, run);
    const request = JSON.stringify(llm.chatRequests[0]?.body);
    expect(request).toContain("Deploy main [secret:token] for ops");
    expect(request).not.toContain(VALUE);
  });

  it(
    "mask a vault value an invalid agent file's error quotes, where a run of it is refused",
    { timeout: 90_000 },
    async () => {
      const { project } = await kit.scriptedProject(textReply("ok"));
      const set = await agentd(["secrets", "set", "token"], { cwd: project.root, input: VALUE });
      expect(set.exitCode, set.stderr).toBe(0);
      // A value pasted into the wrong field: the error names the "tool" it quotes.
      project.writeAgent("broken.md", `---\nname: broken\ndescription: d\ntools: [${VALUE}]\n---\nGo.\n`);
      const daemon = await kit.daemon(project.configFile);
      // Right after the start: the vault is read before the API answers.
      const listed = JSON.stringify((await daemon.request("GET", "/agents")).body);
      expect(listed).toContain("[secret:token]");
      expect(listed).not.toContain(VALUE);
      const refused = await daemon.request("POST", "/agents/broken/runs", { task: "go" });
      const answer = JSON.stringify(refused.body);
      expect(answer).toContain("[secret:token]");
      expect(answer).not.toContain(VALUE);
    },
  );
});
