import { existsSync } from "node:fs";
import { describe, expect, it } from "vitest";
import type { AgentEvent } from "../../src/events/agent-event.js";
import { DataDirectoryLock, lockFileOf } from "../../src/locks/data-directory-lock.js";
import type { RunRecord } from "../../src/run-vocabulary/run-record.js";
import { agentd } from "../support/agentd-cli.js";
import { agentEvents, getRun, listRuns, runEvents, startRun } from "../daemon/api-shapes.js";
import { useTestKit } from "../support/test-kit.js";
import { waitFor } from "../support/wait-for.js";
import { type ScriptedLlmServer, textReply, toolCallReply } from "../support/scripted-llm-server.js";

const kit = useTestKit();

/** `agentd run` as a user types it, in its own process. */
function agentdRun(configFile: string, ...args: string[]): ReturnType<typeof agentd> {
  const child = agentd(["run", "--config", configFile, ...args]);
  kit.defer(() => void child.kill("SIGKILL"));
  return child;
}

async function llmServer(): Promise<ScriptedLlmServer> {
  const llm = await kit.scriptedLlm();
  // A task saying "slow" never gets an answer: the run stays in flight until it is stopped.
  llm.setDefaultReply((request) =>
    JSON.stringify(request.body?.messages ?? []).includes("slow") ? { type: "hang" } : textReply("Hello!"),
  );
  return llm;
}

/** An event as both paths must produce it: without what differs by nature (ids, times, run ids). */
function comparable(event: AgentEvent): unknown {
  const data = { ...(event.data as Record<string, unknown>) };
  delete data["duration_ms"];
  delete data["call_id"];
  return { agent: event.agent, type: event.type, data };
}

function comparableRecord(record: RunRecord): unknown {
  const { id: _id, created_at: _c, started_at: _s, ended_at: _e, trigger: _t, ...kept } = record;
  return kept;
}

const jsonLines = (text: string) =>
  text
    .trim()
    .split("\n")
    .map((line) => JSON.parse(line) as Record<string, unknown>);

describe("agentd run and the data folder", { timeout: 120_000 }, () => {
  it("records its run in data_dir as the daemon would: same events, same record, ids continued, agentd runs shows it", async () => {
    const llm = await llmServer();
    const workspace = kit.project({ llmUrl: llm.url });
    workspace.writeAgent("hello", { task: "Say hello" });
    const script = () =>
      llm.enqueue(toolCallReply({ name: "read_file", arguments: { path: "x" } }), textReply("done"));

    script();
    const local = await agentdRun(workspace.configFile, "hello", "--json");
    expect(local.exitCode).toBe(0);
    const lines = jsonLines(local.stdout);
    const localRecord = lines.at(-1) as unknown as RunRecord;
    const localEvents = lines.slice(0, -1) as unknown as AgentEvent[];
    expect(localRecord).toMatchObject({ status: "completed", result: "done", trigger: { kind: "cli" } });
    expect(localEvents.map((event) => event.id)).toEqual(localEvents.map((_, index) => index + 1));
    // The folder is released with the run.
    expect(existsSync(lockFileOf(workspace.dataDirectory))).toBe(false);

    const daemon = await kit.daemon(workspace.configFile);
    // The daemon reads the run agentd run recorded: in GET /runs, agentd runs and last_run.
    expect((await getRun(daemon, localRecord.id)).status).toBe("completed");
    const listed = await agentd(["runs", "--config", workspace.configFile], {
      environment: { AGENTD_URL: daemon.url },
    });
    expect(listed.exitCode).toBe(0);
    expect(listed.stdout).toContain(localRecord.id);
    const agent = (await daemon.request("GET", "/agents/hello")).body as { last_run?: { id: string } };
    expect(agent.last_run?.id).toBe(localRecord.id);
    expect(await runEvents(daemon, localRecord.id)).toEqual(localEvents);

    script();
    const run = await startRun(daemon, "hello", "Say hello");
    const record = await waitFor(async () => {
      const current = await getRun(daemon, run);
      return current.ended_at === undefined ? undefined : current;
    }, "the daemon's run");
    const daemonEvents = await runEvents(daemon, run);
    // Each run carries who started it (an `audit` event): a token for the daemon's, the local user
    // for the command line's.
    const started = daemonEvents.filter((event) => event.type === "audit");
    expect(started.map((event) => event.data)).toEqual([
      { action: "run.start", actor: { kind: "token", name: "default" } },
    ]);
    const startedHere = localEvents.filter((event) => event.type === "audit");
    expect(startedHere.map((event) => event.data)).toMatchObject([
      { action: "run.start", actor: { kind: "cli" } },
    ]);
    expect(daemonEvents.filter((event) => event.type !== "audit").map(comparable)).toEqual(
      localEvents.filter((event) => event.type !== "audit").map(comparable),
    );
    expect(comparableRecord(record)).toEqual(comparableRecord(localRecord));
    // One log per agent, its ids gap-free across both writers.
    const all = await agentEvents(daemon, "hello");
    expect(all.map((event) => event.id)).toEqual(all.map((_, index) => index + 1));
    expect(daemonEvents[0]?.id).toBe(localEvents.length + 1);
  });

  it("sends the run to the daemon that owns the folder: its output and exit code, Ctrl-C stops it there", async () => {
    const llm = await llmServer();
    const workspace = kit.project({ llmUrl: llm.url });
    workspace.writeAgent("hello", { task: "Say hello" });
    const daemon = await kit.daemon(workspace.configFile);

    const completed = await agentdRun(workspace.configFile, "hello");
    expect(completed.exitCode).toBe(0);
    expect(completed.stdout).toBe("Hello!\n");
    expect(completed.stderr).toContain(
      `the daemon at ${daemon.url} (pid ${daemon.pid}) owns this data folder`,
    );
    expect(completed.stderr).toMatch(/status\s+running/);
    expect(completed.stderr).toMatch(/completed in [\d.]+ s/);

    const slow = agentdRun(workspace.configFile, "hello", "slow work", "--json");
    const running = await waitFor(async () => {
      const runs = await listRuns(daemon, "?agent=hello&status=running");
      return runs[0];
    }, "the run sent by agentd run");
    slow.kill("SIGINT");
    const stopped = await slow;
    expect(stopped.exitCode).toBe(1);
    const lines = jsonLines(stopped.stdout);
    expect(lines.at(-1)).toMatchObject({ id: running.id, status: "stopped", reason: "user_stop" });
    expect((await getRun(daemon, running.id)).status).toBe("stopped");
    // Every event printed is the daemon's own, once: the folder had one writer.
    const printed = lines.slice(0, -1).map((line) => line["id"]);
    const logged = (await runEvents(daemon, running.id)).map((event) => event.id);
    expect(printed).toEqual(logged);
    const all = await agentEvents(daemon, "hello");
    expect(all.map((event) => event.id)).toEqual(all.map((_, index) => index + 1));
  });

  it("reaches a daemon that listens on every interface (as in the container) on loopback", async () => {
    const llm = await llmServer();
    const workspace = kit.project({ llmUrl: llm.url, config: { server: { host: "0.0.0.0", port: 0 } } });
    workspace.writeAgent("hello", { task: "Say hello" });
    const daemon = await kit.daemon(workspace.configFile);
    expect(new URL(daemon.url).hostname).toBe("0.0.0.0");

    const completed = await agentdRun(workspace.configFile, "hello");
    expect(completed.stderr).toContain("owns this data folder");
    expect(completed.exitCode).toBe(0);
    expect(completed.stdout).toBe("Hello!\n");
  });

  it("refuses a second agentd run while one holds the folder, naming it, and releases it on exit", async () => {
    const llm = await llmServer();
    const workspace = kit.project({ llmUrl: llm.url });
    workspace.writeAgent("hello", { task: "Say hello" });
    const first = agentdRun(workspace.configFile, "hello", "slow work");
    const holder = await waitFor(
      async () => DataDirectoryLock.holderOf(workspace.dataDirectory),
      "the first agentd run to take the folder",
    );
    expect(holder).toMatchObject({ command: "run", agent: "hello", pid: first.pid });

    const second = await agentdRun(workspace.configFile, "hello");
    expect(second.exitCode).toBe(1);
    expect(second.stderr).toContain("DATA_DIR_LOCKED");
    expect(second.stderr).toContain(`agentd run hello (pid ${first.pid}`);

    await llm.waitForChatRequests(1);
    first.kill("SIGINT");
    const stopped = await first;
    expect(stopped.exitCode).toBe(1);
    expect(stopped.stderr).toMatch(/stopped · user_stop/);
    expect(existsSync(lockFileOf(workspace.dataDirectory))).toBe(false);
    expect(llm.chatRequests).toHaveLength(1);
  });
});
