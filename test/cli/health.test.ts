import { existsSync, readdirSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { agentd } from "../support/agentd-cli.js";
import { useTestKit } from "../support/test-kit.js";

const kit = useTestKit();

/** Nothing listens there: the daemon's runs are not what these tests look at. */
const NO_LLM = "http://127.0.0.1:9/v1";

describe("agentd health", { timeout: 90_000 }, () => {
  it("passes when the daemon answers and a shell call runs in the sandbox, in the default workspaces", async () => {
    const workspace = kit.project({ llmUrl: NO_LLM });
    const daemon = await kit.daemon(workspace.configFile);
    // (port 0 in this config: AGENTD_URL names the port the daemon took.)
    const health = await agentd(["health", "--config", workspace.configFile], {
      environment: { AGENTD_URL: daemon.url },
    });
    expect(health.stdout).toContain(`daemon: ok — ${daemon.url}/health: ok`);
    const workspaces = path.join(workspace.root, ".agentd", "workspaces");
    expect(health.stdout).toContain(
      `sandbox: ok — a shell call ran in the sandbox (workspaces in ${workspaces})`,
    );
    expect(health.exitCode).toBe(0);
    // Its folder for the call is gone again; the workspaces root stays for the agents.
    expect(existsSync(workspaces)).toBe(true);
    expect(readdirSync(workspaces)).toEqual([]);

    const json = await agentd(["health", "--json", "--config", workspace.configFile], {
      environment: { AGENTD_URL: daemon.url },
    });
    expect(JSON.parse(json.stdout)).toMatchObject({ ok: true, daemon: { ok: true }, sandbox: { ok: true } });
  });

  it("fails, saying which check and why, without a daemon or without bubblewrap", async () => {
    const workspace = kit.project({ llmUrl: NO_LLM });
    const noDaemon = await agentd(["health", "--config", workspace.configFile], {
      environment: { AGENTD_URL: "http://127.0.0.1:9" },
    });
    expect(noDaemon.exitCode).toBe(1);
    expect(noDaemon.stdout).toMatch(/^daemon: FAILED — .*127\.0\.0\.1:9/m);
    expect(noDaemon.stdout).toContain("sandbox: ok");

    // A PATH without bwrap: the sandbox cannot be set up, and the check says so.
    const noBubblewrap = await agentd(["health", "--config", workspace.configFile], {
      environment: { AGENTD_URL: "http://127.0.0.1:9", PATH: "/nonexistent" },
    });
    expect(noBubblewrap.exitCode).toBe(1);
    expect(noBubblewrap.stdout).toContain(
      "sandbox: FAILED — cannot sandbox the health check: bubblewrap (bwrap) is not installed",
    );
  });
});
