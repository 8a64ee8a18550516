import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { agentd } from "../support/agentd-cli.js";
import { useTestKit } from "../support/test-kit.js";

// An operator turns an agent off and on through the API and the CLI: the scheduler drops its next
// fire, new runs are refused with a hint, the state survives a restart, and the file is untouched.
const kit = useTestKit("test");

interface AgentRow {
  id: string;
  enabled: boolean;
  next_fire: string | null;
  switched_off: { by: string; at: string } | null;
}

describe("enabling and disabling an agent", { timeout: 120_000 }, () => {
  it("stops its schedule and its runs, keeps that over a restart, and leaves the file alone", async () => {
    const project = kit.project();
    const file = project.writeAgent("ticker", { schedule: "0 9 * * *", task: "tick" });
    project.writeAgent("frozen", { enabled: false, task: "never" });
    const original = readFileSync(file, "utf8");
    let daemon = await kit.daemon(project.configFile);
    const agent = async (id: string) => {
      const reply = await daemon.request("GET", `/agents/${id}`);
      return reply.body as AgentRow;
    };
    expect((await agent("ticker")).next_fire).not.toBeNull();

    const off = await daemon.request("POST", "/agents/ticker/disable");
    expect(off.status).toBe(200);
    expect(off.body).toMatchObject({ id: "ticker", enabled: false, switched_off: { by: "token:default" } });
    const row = await agent("ticker");
    expect(row).toMatchObject({ enabled: false, next_fire: null, switched_off: { by: "token:default" } });

    const refused = await daemon.request("POST", "/agents/ticker/runs", { task: "now" });
    expect(refused.status).toBe(409);
    expect(refused.body).toMatchObject({
      error: { code: "AGENT_DISABLED", hint: expect.stringContaining("agentd enable ticker") },
    });
    const audit = await daemon.request("GET", "/audit");
    expect(JSON.stringify(audit.body)).toContain('"action":"agent.disable"');

    // A restart keeps it off; the agent file was never written.
    await daemon.kill();
    daemon = await kit.daemon(project.configFile);
    expect(await agent("ticker")).toMatchObject({ enabled: false, next_fire: null });
    expect((await daemon.request("POST", "/agents/ticker/runs", { task: "now" })).status).toBe(409);
    expect(readFileSync(file, "utf8")).toBe(original);

    const on = await daemon.request("POST", "/agents/ticker/enable");
    expect(on.body).toMatchObject({ enabled: true, switched_off: null });
    expect((await agent("ticker")).next_fire).not.toBeNull();
    expect((await daemon.request("POST", "/agents/ticker/runs", { task: "now" })).status).toBe(202);

    // The file's `enabled: false` is the file's: enabling through the API cannot override it.
    const fileOff = await daemon.request("POST", "/agents/frozen/enable");
    expect(fileOff.status).toBe(409);
    expect(fileOff.body).toMatchObject({
      error: { code: "AGENT_DISABLED", hint: expect.stringContaining("enabled: true") },
    });
    expect((await daemon.request("POST", "/agents/ghost/disable")).status).toBe(404);
  });

  it("takes a run token, refuses a read token, and works from agentd disable|enable and agentd agents", async () => {
    const project = kit.project();
    project.writeAgent("worker", { task: "work" });
    const daemon = await kit.daemon(project.configFile);
    const tokenOf = async (name: string, role: string) => {
      const reply = await daemon.request("POST", "/tokens", { name, role });
      expect(reply.status).toBe(201);
      return (reply.body as { token: string }).token;
    };
    const post = async (token: string, path: string) =>
      fetch(`${daemon.url}${path}`, { method: "POST", headers: { authorization: `Bearer ${token}` } });
    const reader = await tokenOf("reader", "read");
    const runner = await tokenOf("runner", "run");
    const forbidden = await post(reader, "/agents/worker/disable");
    expect(forbidden.status).toBe(403);
    expect(await forbidden.json()).toMatchObject({ error: { code: "FORBIDDEN_ROLE" } });
    const allowed = await post(runner, "/agents/worker/disable");
    expect(allowed.status).toBe(200);
    expect(await allowed.json()).toMatchObject({ switched_off: { by: "token:runner" } });
    await post(runner, "/agents/worker/enable");

    const environment = { AGENTD_URL: daemon.url, AGENTD_TOKEN: daemon.token ?? "" };
    const options = { cwd: project.root, environment };
    const disabled = await agentd(["disable", "worker"], options);
    expect(disabled.exitCode, disabled.stderr).toBe(0);
    expect(disabled.stdout).toContain("worker: disabled by");
    const listed = await agentd(["agents", "--config", project.configFile], options);
    expect(listed.stdout).toMatch(/worker\s+worker\s+disabled by /);
    const started = await daemon.request("POST", "/agents/worker/runs", { task: "now" });
    expect(started.status).toBe(409);
    const enabled = await agentd(["enable", "worker"], options);
    expect(enabled.stdout).toContain("worker: enabled");
    const listedAgain = await agentd(["agents", "--config", project.configFile], options);
    expect(listedAgain.stdout).toMatch(/worker\s+worker\s+valid/);
  });
});
