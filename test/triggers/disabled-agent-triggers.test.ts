import { mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { useScriptedDaemon } from "../support/scripted-daemon.js";
import { textReply } from "../support/scripted-llm-server.js";
import { waitFor } from "../support/wait-for.js";
import { waitForRunEnd } from "../daemon/api-shapes.js";

const BEARER = "bearer-hook-secret-value-0123456789";

const scripted = useScriptedDaemon({
  reply: textReply("handled"),
  config: { vault: { backend: "env" } },
  environment: { AGENTD_SECRET_BEARER_HOOK: BEARER },
  agents: (project) => {
    mkdirSync(path.join(project.root, "inbox"));
    project.writeAgent("upstream", {});
    project.writeAgent("switched", {
      workdir: ".",
      triggers: [
        { webhook: "hook", secret: "{{secret:bearer_hook}}", signature: "bearer" },
        { after: { agent: "upstream" } },
        { watch: { path: "inbox", debounce: "100ms" } },
      ],
    });
  },
});

interface RunSummary {
  id: string;
  task: string;
  trigger: { kind: string; id?: string };
}

async function runsOfSwitched(): Promise<RunSummary[]> {
  return ((await scripted.daemon.request("GET", "/runs?agent=switched")).body as { runs: RunSummary[] }).runs;
}

async function hook(): Promise<number> {
  const response = await fetch(`${scripted.daemon.url}/hooks/switched/hook`, {
    method: "POST",
    headers: { "content-type": "application/json", authorization: `Bearer ${BEARER}` },
    body: JSON.stringify({ at: Math.random() }),
  });
  await response.body?.cancel();
  return response.status;
}

async function upstreamRun(): Promise<string> {
  const started = await scripted.daemon.request("POST", "/agents/upstream/runs", { task: "work" });
  const run = (started.body as { run: string }).run;
  await waitForRunEnd(scripted.daemon, run);
  return run;
}

/** `agentd disable` means no run starts, whichever trigger fires, until `agentd enable`. */
describe("the triggers of an agent an operator disabled", { timeout: 120_000 }, () => {
  it("start nothing while it is off, and start again once it is on", async () => {
    expect((await scripted.daemon.request("POST", "/agents/switched/disable")).status).toBe(200);
    // The same 401 as an unknown hook: a disabled agent's triggers are not served.
    expect(await hook()).toBe(401);
    const whileOff = await upstreamRun();
    writeFileSync(path.join(scripted.project.root, "inbox", "while-off.txt"), "a");

    expect((await scripted.daemon.request("POST", "/agents/switched/enable")).status).toBe(200);
    await waitFor(async () => (await hook()) === 202 || undefined, "the hook served again");
    const whileOn = await upstreamRun();
    await waitFor(async () => {
      writeFileSync(path.join(scripted.project.root, "inbox", "while-on.txt"), String(Math.random()));
      return (await runsOfSwitched()).some((run) => run.trigger.kind === "watch") || undefined;
    }, "the watch run");
    await waitFor(
      async () => (await runsOfSwitched()).some((run) => run.trigger.kind === "after") || undefined,
      "the after run",
    );

    const runs = await runsOfSwitched();
    expect(runs.filter((run) => run.trigger.kind === "webhook")).toHaveLength(1);
    // Only the upstream run that ended while it was on is followed.
    expect(runs.filter((run) => run.trigger.kind === "after").map((run) => run.trigger.id)).toEqual([
      whileOn,
    ]);
    expect(JSON.stringify(runs)).not.toContain(whileOff);
    // The file written while it was off is in no run's task.
    const watched = runs.filter((run) => run.trigger.kind === "watch");
    expect(watched.length).toBeGreaterThanOrEqual(1);
    for (const run of watched) {
      expect(run.task).toContain("while-on.txt");
      expect(run.task).not.toContain("while-off.txt");
    }
  });
});
