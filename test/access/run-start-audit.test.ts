import { mkdirSync } from "node:fs";
import path from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import type { AuditEntry } from "../../src/access/audit-entry.js";
import type { Actor } from "../../src/events/actor.js";
import type { RunRecord } from "../../src/run-vocabulary/run-record.js";
import { localUserName } from "../../src/util/local-user.js";
import { listRuns, runEvents, startRun, waitForRunEnd } from "../daemon/api-shapes.js";
import { agentd } from "../support/agentd-cli.js";
import type { DaemonProcess } from "../support/daemon-process.js";
import {
  type RecordedRequest,
  type ScriptedReplyValue,
  textReply,
  toolCallReply,
} from "../support/scripted-llm-server.js";
import type { TempProject } from "../support/temp-project.js";
import { useTestKit } from "../support/test-kit.js";
import { waitFor } from "../support/wait-for.js";

const HOOK_SECRET = "run-start-audit-hook-secret-0123456789";

/** The lead delegates to its helper once; every other run answers at once. */
function reply(request: RecordedRequest): ScriptedReplyValue {
  const messages = request.body?.messages ?? [];
  const delegated = messages.some((message) => message.role === "tool");
  if (String(messages[1]?.content ?? "") === "delegate" && !delegated) {
    return toolCallReply({ name: "agent__helper", arguments: { task: "help" } });
  }
  return textReply("done");
}

const kit = useTestKit("file");
let project: TempProject;
let daemon: DaemonProcess;
let cliRun: { id: string; exitCode: number | undefined; stderr: string };

beforeAll(async () => {
  const scripted = await kit.scriptedProject(reply, { config: { vault: { backend: "env" } } });
  project = scripted.project;
  mkdirSync(path.join(project.root, "work"), { recursive: true });
  project.writeAgent("solo", {});
  project.writeAgent("writer", {});
  project.writeAgent("checker", { triggers: [{ after: { agent: "writer", status: ["completed"] } }] });
  project.writeAgent("hooked", {
    triggers: [{ webhook: "in", secret: "{{secret:hook}}", signature: "bearer" }],
  });
  project.writeAgent("helper", { description: "Helps" });
  project.writeAgent("lead", { agents: ["helper"] });
  // `agentd run` in its own process, on the data folder no daemon holds yet.
  const ran = await agentd(["run", "solo", "go alone", "--config", project.configFile, "--json"], {
    cwd: project.root,
  });
  const record = JSON.parse(ran.stdout.trim().split("\n").at(-1) ?? "{}") as { id?: string };
  cliRun = { id: record.id ?? "", exitCode: ran.exitCode, stderr: ran.stderr };
  // A schedule every second, added once `agentd run` is done: the daemon fires it at once.
  project.writeAgent("ticker", { schedule: "* * * * * *", task: "tick" });
  daemon = await kit.daemon(project.configFile, { environment: { AGENTD_SECRET_HOOK: HOOK_SECRET } });
}, 120_000);

async function auditTrail(): Promise<AuditEntry[]> {
  const reply = await daemon.request("GET", "/audit?limit=1000");
  if (reply.status !== 200) throw new Error(`GET /audit: ${reply.status} ${JSON.stringify(reply.body)}`);
  return (reply.body as { entries: AuditEntry[] }).entries;
}

/** The run's `run.start` entries of `GET /audit` and of its own events: one each, with `actor`. */
async function expectStartAudited(run: string, agent: string, actor: Actor): Promise<void> {
  const entries = await waitFor(async () => {
    const found = (await auditTrail()).filter((entry) => entry.action === "run.start" && entry.run === run);
    return found.length > 0 && found;
  }, `the run.start entry of ${run}`);
  expect(entries).toEqual([expect.objectContaining({ actor, agent, run })]);
  const events = await waitFor(async () => {
    const found = (await runEvents(daemon, run)).filter(
      (event) => event.type === "audit" && event.data.action === "run.start",
    );
    return found.length > 0 && found;
  }, `the run.start event of ${run}`);
  expect(events.map((event) => (event.type === "audit" ? event.data.actor : undefined))).toEqual([actor]);
}

async function firstRunOf(agent: string, query = ""): Promise<RunRecord> {
  return waitFor(async () => (await listRuns(daemon, `?agent=${agent}${query}`)).at(-1), `a run of ${agent}`);
}

describe("the audit trail of run starts", { timeout: 120_000 }, () => {
  it("records a run of `agentd run` with the local user as its cli actor", async () => {
    expect(cliRun.exitCode, cliRun.stderr).toBe(0);
    expect(cliRun.id).toMatch(/^r_/);
    await expectStartAudited(cliRun.id, "solo", { kind: "cli", name: localUserName() });
  });

  it("records a scheduled run with the schedule as its actor", async () => {
    const run = await firstRunOf("ticker");
    expect(run.trigger.kind).toBe("schedule");
    await expectStartAudited(run.id, "ticker", { kind: "schedule", name: "ticker" });
  });

  it("records a webhook's run with the trigger as its actor", async () => {
    const response = await fetch(`${daemon.url}/hooks/hooked/in`, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${HOOK_SECRET}` },
      body: JSON.stringify({ event: "push" }),
    });
    expect(response.status).toBe(202);
    const run = await firstRunOf("hooked");
    expect(run.trigger).toMatchObject({ kind: "webhook", name: "in" });
    await expectStartAudited(run.id, "hooked", { kind: "trigger", name: "webhook:in" });
  });

  it("records an API run once, with its token, and its after-trigger's follower with the trigger", async () => {
    const upstream = await startRun(daemon, "writer", "write");
    await waitForRunEnd(daemon, upstream);
    await expectStartAudited(upstream, "writer", { kind: "token", name: "default" });
    const follower = await firstRunOf("checker");
    expect(follower.trigger).toMatchObject({ kind: "after", id: upstream });
    const name = (follower.trigger as { name: string }).name;
    await expectStartAudited(follower.id, "checker", { kind: "trigger", name: `after:${name}` });
  });

  it("records a sub-agent's run with its parent run as a system actor", async () => {
    const parent = await startRun(daemon, "lead", "delegate");
    expect(await waitForRunEnd(daemon, parent)).toMatchObject({ status: "completed" });
    const child = await firstRunOf("helper", `&parent=${parent}`);
    expect(child.parent_run).toBe(parent);
    await expectStartAudited(child.id, "helper", { kind: "system", name: parent });
    const entry = (await auditTrail()).find((found) => found.run === child.id);
    expect(entry?.details).toEqual({ parent_run: parent });
  });
});
