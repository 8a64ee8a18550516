import { existsSync, mkdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import type { PendingApproval } from "../../src/approvals/approval-broker.js";
import { agentd as agentdCli } from "../support/agentd-cli.js";
import { textReply, toolCallReply } from "../support/scripted-llm-server.js";
import { agentEvents, getRun, runEvents, startRun, waitForRunEnd } from "./api-shapes.js";
import { useScriptedDaemon } from "../support/scripted-daemon.js";
import { waitFor } from "../support/wait-for.js";

/** Each test has its own agent, so its events and runs are its own; the daemon is shared. */
const AGENTS = ["approved", "denied", "by-cli", "stopped"];

const scripted = useScriptedDaemon({
  agents: (project) => {
    mkdirSync(path.join(project.root, "work"));
    for (const agent of AGENTS) {
      project.writeAgent(agent, {
        workdir: `work/${agent}`,
        tools: ["write_file"],
        permissions: { ask: ["write_file"] },
      });
    }
  },
});

/**
 * Starts a run of `agent` whose model calls write_file once (an `ask` call), then, unless the run
 * is to be stopped while waiting, answers (nothing is left queued for the next test).
 */
async function startReportRun(
  agent: string,
  options: { stoppedWhileWaiting?: boolean } = {},
): Promise<string> {
  scripted.llm.enqueue(
    toolCallReply({ name: "write_file", arguments: { path: "report.md", content: "weekly report" } }),
  );
  if (!options.stoppedWhileWaiting) scripted.llm.enqueue(textReply("report handled"));
  return startRun(scripted.daemon, agent, "write the report");
}

const reportOf = (agent: string) => path.join(scripted.project.root, "work", agent, "report.md");

async function pendingApprovals(): Promise<PendingApproval[]> {
  const reply = await scripted.daemon.request("GET", "/approvals");
  return (reply.body as { approvals: PendingApproval[] }).approvals;
}

async function waitForApproval(run: string): Promise<PendingApproval> {
  return waitFor(
    async () => (await pendingApprovals()).find((approval) => approval.run === run),
    "a pending approval",
  );
}

/** `agentd <args>` against this daemon, as a user types it. */
function agentd(...args: string[]) {
  return agentdCli(args, {
    environment: { AGENTD_URL: scripted.daemon.url, AGENTD_TOKEN: scripted.daemon.token ?? "" },
  });
}

describe("approvals in the daemon", () => {
  it("parks an ask call in waiting until POST /approvals/:id approves it, then runs the tool", async () => {
    const run = await startReportRun("approved");
    const approval = await waitForApproval(run);
    expect(approval).toMatchObject({
      agent: "approved",
      run,
      tool: "write_file",
      arguments: { path: "report.md", content: "weekly report" },
    });
    expect(approval.id).toMatch(/^a_/);
    expect(Date.parse(approval.expires_at ?? "")).toBeGreaterThan(Date.now());
    expect((await getRun(scripted.daemon, run)).status).toBe("waiting");
    expect(existsSync(reportOf("approved"))).toBe(false);

    const reply = await scripted.daemon.request("POST", `/approvals/${approval.id}`, { decision: "approve" });
    expect(reply.status).toBe(200);
    const record = await waitForRunEnd(scripted.daemon, run);
    expect(record).toMatchObject({ status: "completed", result: "report handled" });
    expect(readFileSync(reportOf("approved"), "utf8")).toBe("weekly report");
    expect(await pendingApprovals()).toEqual([]);
    const states = (await agentEvents(scripted.daemon, "approved")).flatMap((event) =>
      event.type === "approval" ? [event.data.state] : event.type === "status" ? [event.data.status] : [],
    );
    expect(states).toEqual(["queued", "running", "waiting", "requested", "approved", "running", "completed"]);

    const again = await scripted.daemon.request("POST", `/approvals/${approval.id}`, { decision: "deny" });
    expect(again.status).toBe(404);
    expect(JSON.stringify(again.body)).toContain("APPROVAL_NOT_FOUND");
  });

  it("does not run a denied call; the model is told and the run goes on", async () => {
    const run = await startReportRun("denied");
    const approval = await waitForApproval(run);
    expect(
      (await scripted.daemon.request("POST", `/approvals/${approval.id}`, { decision: "deny" })).status,
    ).toBe(200);
    expect(await waitForRunEnd(scripted.daemon, run)).toMatchObject({ status: "completed" });
    expect(existsSync(reportOf("denied"))).toBe(false);
    const observation = (await runEvents(scripted.daemon, run)).find((event) => event.type === "observation");
    expect(observation?.data).toMatchObject({
      tool: "write_file",
      ok: false,
      output: expect.stringContaining("not approved: a human denied it"),
    });
  });

  it("lists and answers approvals with agentd approvals and agentd approve", async () => {
    const run = await startReportRun("by-cli");
    const approval = await waitForApproval(run);
    const listed = await agentd("approvals");
    expect(listed.exitCode).toBe(0);
    expect(listed.stdout).toContain(`${approval.id}  by-cli  ${run}  write_file`);
    expect(listed.stdout).toContain("weekly report");

    const approved = await agentd("approve", approval.id);
    expect(approved.exitCode).toBe(0);
    expect(approved.stdout).toContain(`approved ${approval.id}`);
    expect(await waitForRunEnd(scripted.daemon, run)).toMatchObject({ status: "completed" });
    expect(readFileSync(reportOf("by-cli"), "utf8")).toBe("weekly report");

    const unknown = await agentd("deny", approval.id);
    expect(unknown.exitCode).not.toBe(0);
    expect(unknown.stderr).toContain("APPROVAL_NOT_FOUND");
  }, 60_000);

  it("ends the wait when the run is stopped, leaving nothing pending", async () => {
    const run = await startReportRun("stopped", { stoppedWhileWaiting: true });
    await waitForApproval(run);
    expect((await scripted.daemon.request("POST", `/runs/${run}/stop`)).status).toBeLessThan(300);
    expect(await waitForRunEnd(scripted.daemon, run)).toMatchObject({ status: "stopped" });
    expect(await pendingApprovals()).toEqual([]);
    expect(existsSync(reportOf("stopped"))).toBe(false);
  });
});
