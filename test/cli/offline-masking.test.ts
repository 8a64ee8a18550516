import { mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { listTriggers } from "../../src/cli/commands/triggers.js";
import { runValidate } from "../../src/cli/commands/validate.js";
import { createTempProject, type TempProject } from "../support/temp-project.js";

const SECRET = "dk-7f3a91c2e4b8d6f0";
const ENVIRONMENT = { AGENTD_SECRET_DEPLOY_KEY: SECRET };

async function validate(project: TempProject, json: boolean, environment: NodeJS.ProcessEnv = ENVIRONMENT) {
  let output = "";
  const exitCode = await runValidate({ json, cwd: project.root, environment }, (text) => {
    output += text;
  });
  return { exitCode, output };
}

/** An agent file that quotes the vault's secret: in a bad schedule (an error) and a webhook filter. */
function writeQuotingAgents(project: TempProject): void {
  project.writeAgent("leaky", { schedule: `${SECRET} * *` });
  project.writeAgent("hooked", {
    triggers: [
      {
        webhook: "deploy",
        secret: "{{secret:deploy_key}}",
        signature: "bearer",
        filter: { "deploy.token": SECRET },
      },
    ],
  });
}

/**
 * `agentd validate` and `agentd triggers` print what the agent files say, errors and filters
 * included: a secret's value quoted there is masked as the daemon's API masks it, and when the
 * vault cannot be read the command says its output is not masked.
 */
describe("offline commands and the vault's values", () => {
  let project: TempProject;
  afterEach(() => project.remove());

  it("agentd validate masks a secret value an agent file quotes, as text and as JSON", async () => {
    project = createTempProject({ config: { vault: { backend: "env" } } });
    writeQuotingAgents(project);
    const human = await validate(project, false);
    expect(human.exitCode).toBe(1);
    expect(human.output).toContain("[secret:deploy_key]");
    expect(human.output).not.toContain(SECRET);
    const json = await validate(project, true);
    expect(json.output).not.toContain(SECRET);
    const report = JSON.parse(json.output) as {
      agents: Array<{ id: string; errors: Array<{ message: string }> }>;
    };
    expect(report.agents.find((agent) => agent.id === "leaky")?.errors[0]?.message).toContain(
      "[secret:deploy_key]",
    );
  });

  it("agentd triggers masks a secret value a webhook filter quotes", async () => {
    project = createTempProject({ config: { vault: { backend: "env" } } });
    writeQuotingAgents(project);
    const { listings, vaultProblem } = await listTriggers({
      config: project.configFile,
      cwd: project.root,
      environment: ENVIRONMENT,
    });
    expect(vaultProblem).toBeUndefined();
    expect(listings).toEqual([
      expect.objectContaining({ agent: "hooked", detail: expect.stringContaining("[secret:deploy_key]") }),
    ]);
    expect(JSON.stringify(listings)).not.toContain(SECRET);
  });

  it("says so when the vault cannot be read", async () => {
    project = createTempProject({ config: { vault: { backend: "file" } } });
    writeQuotingAgents(project);
    mkdirSync(project.dataDirectory, { recursive: true });
    writeFileSync(path.join(project.dataDirectory, "vault.json"), "not a vault");
    const human = await validate(project, false, {});
    expect(human.output).toMatch(/warnings:[^]*could not read the vault .*not masked/);
    const json = JSON.parse((await validate(project, true, {})).output) as { vault_problem?: string };
    expect(json.vault_problem).toMatch(/^could not read the vault/);
    const listed = await listTriggers({ config: project.configFile, cwd: project.root, environment: {} });
    expect(listed.vaultProblem).toMatch(/^could not read the vault/);
  });
});
