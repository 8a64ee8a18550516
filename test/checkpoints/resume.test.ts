import { existsSync, mkdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { beforeEach, describe, expect, it } from "vitest";
import type { RunRecord } from "../../src/run-vocabulary/run-record.js";
import { type DaemonProcess } from "../support/daemon-process.js";
import {
  type RecordedRequest,
  type ScriptedLlmServer,
  type ScriptedReplyValue,
  textReply,
  toolCallReply,
} from "../support/scripted-llm-server.js";
import { getRun, runEvents, startRun } from "../daemon/api-shapes.js";
import { type TempProject } from "../support/temp-project.js";
import { useTestKit } from "../support/test-kit.js";
import { waitFor } from "../support/wait-for.js";

let llm: ScriptedLlmServer;
let workspace: TempProject;
let daemon: DaemonProcess | undefined;

/** Round n (1, 2) writes its own file `round-<n>.txt`; round 3 never answers until the daemon is gone. */
function beforeTheCrash(request: RecordedRequest): ScriptedReplyValue {
  const round = (request.body?.messages ?? []).filter((message) => message.role === "assistant").length + 1;
  if (round > 2) return { type: "hang" };
  return toolCallReply({
    name: "write_file",
    arguments: { path: `round-${round}.txt`, content: `round ${round}` },
  });
}

const kit = useTestKit();
beforeEach(async () => {
  ({ llm, project: workspace } = await kit.scriptedProject());
  mkdirSync(path.join(workspace.root, "work"));
});

async function waitForEnd(run: string): Promise<RunRecord> {
  return waitFor(
    async () => {
      const record = await getRun(daemon as DaemonProcess, run);
      return record.ended_at && record.status !== "failed" ? record : undefined;
    },
    `run ${run} to end`,
    30_000,
  );
}

describe("checkpoints and resume", () => {
  it("resumes a resume: true run killed -9 after round 2 from its checkpoint, running no tool twice", async () => {
    workspace.writeAgent("steady", {
      resume: true,
      workdir: "work",
      tools: ["write_file"],
      permissions: { allow: ["write_file"] },
    });
    llm.setDefaultReply(beforeTheCrash);
    daemon = await kit.daemon(workspace.configFile);
    const run = await startRun(daemon, "steady", "write two files");
    await llm.waitForChatRequests(3, 30_000);
    await daemon.kill();

    llm.setDefaultReply((request) => {
      const toolResults = (request.body?.messages ?? []).filter((message) => message.role === "tool");
      return textReply(`finished after ${toolResults.length} tool results`);
    });
    const before = llm.chatRequests.length;
    daemon = await kit.daemon(workspace.configFile);
    const record = await waitForEnd(run);
    expect(record).toMatchObject({ status: "completed", result: "finished after 2 tool results" });

    // The model saw rounds 1 and 2 after the restart, and no third write_file happened.
    const resumedRequest = llm.chatRequests[before];
    const seen = (resumedRequest?.body?.messages ?? []).map((message) => message.role);
    expect(seen).toEqual(["system", "user", "assistant", "tool", "assistant", "tool"]);
    const events = await runEvents(daemon, run);
    const actions = events.filter((event) => event.type === "action");
    expect(actions).toHaveLength(2);
    expect(readFileSync(path.join(workspace.root, "work", "round-1.txt"), "utf8")).toBe("round 1");
    expect(readFileSync(path.join(workspace.root, "work", "round-2.txt"), "utf8")).toBe("round 2");
    const resumed = events.find(
      (event) =>
        event.type === "status" && (event.data as { resumed_from_round?: number }).resumed_from_round,
    );
    expect(resumed?.data).toMatchObject({ status: "queued", resumed_from_round: 2 });
  }, 120_000);

  it("answers a tool call cut off by kill -9 as interrupted after the restart, never running it twice", async () => {
    workspace.writeAgent("slow", {
      resume: true,
      workdir: "work",
      tools: ["shell"],
      permissions: { allow: ["shell"] },
    });
    const marker = path.join(workspace.root, "work", "executions.txt");
    llm.setDefaultReply((request) => {
      const toolResults = (request.body?.messages ?? []).filter((message) => message.role === "tool");
      if (toolResults.length === 0) {
        return toolCallReply({
          name: "shell",
          arguments: { command: "echo once >> executions.txt; sleep 60" },
        });
      }
      return textReply(`answered: ${String(toolResults[0]?.content).slice(0, 16)}`);
    });
    daemon = await kit.daemon(workspace.configFile);
    const run = await startRun(daemon, "slow", "run one slow command");
    // The command has started (its marker line is written) and is sleeping: the daemon dies now.
    await waitFor(async () => (existsSync(marker) ? true : undefined), "the slow command to start", 30_000);
    await daemon.kill();

    const before = llm.chatRequests.length;
    daemon = await kit.daemon(workspace.configFile);
    const record = await waitForEnd(run);
    expect(record).toMatchObject({
      status: "completed",
      result: "answered: TOOL_INTERRUPTED",
    });
    const resumedRequest = llm.chatRequests[before];
    const toolMessage = (resumedRequest?.body?.messages ?? []).find((message) => message.role === "tool");
    expect(String(toolMessage?.content)).toContain("TOOL_INTERRUPTED");
    expect(String(toolMessage?.content)).toContain("was not run again");
    expect(readFileSync(marker, "utf8")).toBe("once\n");
    const events = await runEvents(daemon, run);
    expect(events.filter((event) => event.type === "action")).toHaveLength(1);
    const interrupted = events.filter(
      (event) => event.type === "observation" && event.data.output.startsWith("TOOL_INTERRUPTED"),
    );
    expect(interrupted).toHaveLength(1);
    expect(interrupted[0]?.data).toMatchObject({ ok: false, tool: "shell" });
  }, 120_000);

  it("keeps today's behaviour without resume: the run stays failed (crashed), and POST /runs/:run/resume resumes it", async () => {
    workspace.writeAgent("plain", {
      workdir: "work",
      tools: ["write_file"],
      permissions: { allow: ["write_file"] },
    });
    llm.setDefaultReply(beforeTheCrash);
    daemon = await kit.daemon(workspace.configFile);
    const run = await startRun(daemon, "plain", "write two files");
    await llm.waitForChatRequests(3, 30_000);
    await daemon.kill();
    llm.setDefaultReply(textReply("done by hand"));
    daemon = await kit.daemon(workspace.configFile);
    expect(await getRun(daemon, run)).toMatchObject({ status: "failed", reason: "crashed" });
    const resumed = await daemon.request("POST", `/runs/${run}/resume`);
    expect(resumed.status).toBe(200);
    expect(await waitForEnd(run)).toMatchObject({ status: "completed", result: "done by hand" });
  }, 120_000);
});
