import { mkdirSync, realpathSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import type { AgentDetail, AgentSummary } from "../../src/api/api-services.js";
import { agentd } from "../support/agentd-cli.js";
import type { DaemonProcess } from "../support/daemon-process.js";
import { textReply } from "../support/scripted-llm-server.js";
import { useTestKit } from "../support/test-kit.js";
import { waitFor } from "../support/wait-for.js";
import { listRuns, runEvents, startRun, waitForRunEnd } from "./api-shapes.js";

const kit = useTestKit();

async function agentsOf(daemon: DaemonProcess): Promise<Map<string, AgentSummary>> {
  const { agents } = (await daemon.request("GET", "/agents")).body as { agents: AgentSummary[] };
  return new Map(agents.map((agent) => [agent.id, agent]));
}

async function agentOf(daemon: DaemonProcess, id: string): Promise<AgentDetail> {
  return (await daemon.request("GET", `/agents/${id}`)).body as AgentDetail;
}

async function healthOf(daemon: DaemonProcess): Promise<{ unsandboxed_agents?: string[] }> {
  return (await daemon.request("GET", "/health")).body as { unsandboxed_agents?: string[] };
}

/** Waits until `id` is listed with this error code (the registry has read the file). */
function waitForError(daemon: DaemonProcess, id: string, code: string): Promise<AgentSummary> {
  return waitFor(async () => {
    const agent = (await agentsOf(daemon)).get(id);
    return agent?.error_details?.some((error) => error.code === code) ? agent : undefined;
  }, `agent ${id} to be refused with ${code}`);
}

describe("an agent file that switches its own sandbox off", () => {
  it("is refused with SANDBOX_OFF_NOT_ALLOWED while the other agents run; planted or edited in, it never runs", async () => {
    const { project } = await kit.scriptedProject(textReply("done"));
    project.writeAgent("fine", { task: "work" });
    project.writeAgent("open", { sandbox: "off", task: "work" });
    project.writeAgent("wide", { sandbox: { network: "all" }, task: "work" });
    const daemon = await kit.daemon(project.configFile);

    const listed = await agentsOf(daemon);
    expect(listed.get("fine")).toMatchObject({ valid: true, unsandboxed: false });
    for (const id of ["open", "wide"]) {
      expect(listed.get(id)?.valid, id).toBe(false);
      expect(listed.get(id)?.error_details?.[0], id).toMatchObject({
        code: "SANDBOX_OFF_NOT_ALLOWED",
        file: path.join(project.agentsDirectory, `${id}.md`),
        line: 3,
        field: "sandbox",
        hint: expect.stringContaining(`sandbox: { allow_unsandboxed: ["${id}"] }`),
      });
    }
    expect((await daemon.request("POST", "/agents/open/runs", { task: "x" })).status).toBe(409);
    expect(await healthOf(daemon)).toMatchObject({ unsandboxed_agents: [] });
    const run = await startRun(daemon, "fine", "work");
    expect((await waitForRunEnd(daemon, run)).status).toBe("completed");

    // Hot reload: a file planted with a schedule of every second, next to a sandboxed one.
    project.writeAgent("planted", { sandbox: { mode: "off" }, schedule: "* * * * * *", task: "escape" });
    project.writeAgent("ticker", { schedule: "* * * * * *", task: "tick" });
    await waitForError(daemon, "planted", "SANDBOX_OFF_NOT_ALLOWED");
    await waitFor(async () => {
      const ticks = await listRuns(daemon, "?agent=ticker");
      return ticks.filter((tick) => tick.status === "completed").length >= 2 || undefined;
    }, "two scheduled runs of the sandboxed neighbour");
    expect(await listRuns(daemon, "?agent=planted")).toEqual([]);

    // An edit that switches a serving agent off: its last valid, sandboxed version keeps serving.
    project.writeAgent("fine", { sandbox: "off", task: "work" });
    await waitForError(daemon, "fine", "SANDBOX_OFF_NOT_ALLOWED");
    const detail = await agentOf(daemon, "fine");
    expect(detail).toMatchObject({ unsandboxed: false, definition: { sandbox_mode: "workspace-write" } });
    expect(detail.sandbox_view).not.toBeNull();
    const after = await startRun(daemon, "fine", "work");
    await waitForRunEnd(daemon, after);
    const events = await runEvents(daemon, after);
    expect(events.filter((event) => event.type === "warning")).toEqual([]);
    expect(await healthOf(daemon)).toMatchObject({ unsandboxed_agents: [] });
  });

  it("with config consent loads, is listed in /health, and each run starts with an UNSANDBOXED warning", async () => {
    const { project } = await kit.scriptedProject(textReply("done"), {
      config: { sandbox: { allow_unsandboxed: ["open", "net-*"] } },
    });
    project.writeAgent("open", { sandbox: "off", task: "work" });
    project.writeAgent("net-wide", { sandbox: { network: "all" }, task: "work" });
    project.writeAgent("plain", { task: "work" });
    const daemon = await kit.daemon(project.configFile);

    expect((await healthOf(daemon)).unsandboxed_agents?.sort()).toEqual(["net-wide", "open"]);
    const listed = await agentsOf(daemon);
    expect([...listed.values()].map((agent) => [agent.id, agent.valid, agent.unsandboxed]).sort()).toEqual([
      ["net-wide", true, true],
      ["open", true, true],
      ["plain", true, false],
    ]);

    for (const [id, what] of [
      ["open", /sandbox: off — .*every secret the daemon can/],
      ["net-wide", /network: all — /],
    ] as const) {
      const run = await startRun(daemon, id, "work");
      expect((await waitForRunEnd(daemon, run)).status).toBe("completed");
      const events = await runEvents(daemon, run);
      const running = events.findIndex((event) => event.type === "status" && event.data.status === "running");
      // The first event after `running`, before anything the worker does.
      expect(events[running + 1], id).toMatchObject({
        type: "warning",
        data: { code: "UNSANDBOXED", message: expect.stringMatching(what) },
      });
    }
    const plainRun = await startRun(daemon, "plain", "work");
    await waitForRunEnd(daemon, plainRun);
    expect((await runEvents(daemon, plainRun)).some((event) => event.type === "warning")).toBe(false);

    // The view: null with no sandbox; the network shown for network: all; the lists for the rest.
    expect((await agentOf(daemon, "open")).sandbox_view).toBeNull();
    expect((await agentOf(daemon, "net-wide")).sandbox_view).toMatchObject({ network: "all" });
    const workspace = path.join(realpathSync(project.root), ".agentd", "workspaces", "plain");
    expect((await agentOf(daemon, "plain")).sandbox_view).toMatchObject({
      writable: expect.arrayContaining(["/tmp", workspace]),
      read_only: expect.arrayContaining(["/"]),
      hidden: expect.any(Array),
      private: ["/tmp"],
      network: "none",
    });
  });
});

describe("agentd validate --sandbox", () => {
  it("prints what the agent may write, only read, and not see", async () => {
    const project = kit.project();
    project.writeAgent("plain", { sandbox: { write: ["./out"] } });
    mkdirSync(path.join(project.root, "out"));
    const root = realpathSync(project.root);
    const home = realpathSync(os.homedir());
    const result = await agentd(["validate", "--sandbox", "plain"], { cwd: project.root });
    expect(result.exitCode).toBe(0);
    const section = result.stdout.slice(result.stdout.indexOf("sandbox of agent plain"));
    expect(section).toMatch(/^sandbox of agent plain \(mode workspace-write, network none\)/);
    const [, writable = "", readOnly = "", hidden = ""] = section
      .split(/\n {2}(?=writable:|read-only:|hidden:)/)
      .map((list) => list.split("\n").map((line) => line.trim()));
    expect(writable).toEqual(
      expect.arrayContaining([
        path.join(root, ".agentd/workspaces/plain"),
        path.join(root, "out"),
        "/tmp  (private: empty for each command, not the host's)",
      ]),
    );
    expect(readOnly).toEqual(["read-only:", "/  (everything not listed otherwise)"]);
    if (home !== "/") expect(hidden).toContain(home);

    const json = JSON.parse(
      (await agentd(["validate", "--sandbox", "plain", "--json"], { cwd: project.root })).stdout,
    );
    expect(json.sandbox_view).toMatchObject({
      agent: "plain",
      mode: "workspace-write",
      view: { private: ["/tmp"] },
    });
    const unknown = await agentd(["validate", "--sandbox", "plian"], { cwd: project.root });
    expect(unknown.exitCode).toBe(1);
    expect(unknown.stdout).toContain('sandbox of agent plian: no agent "plian" — did you mean "plain"?');
  });
});
