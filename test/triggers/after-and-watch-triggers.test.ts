import { mkdirSync, symlinkSync, writeFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { useScriptedDaemon } from "../support/scripted-daemon.js";
import { textReply } from "../support/scripted-llm-server.js";
import { waitFor } from "../support/wait-for.js";

interface Run {
  id: string;
  agent: string;
  task: string;
  status: string;
  trigger: { kind: string; name?: string; id?: string };
}

const scripted = useScriptedDaemon({
  reply: textReply("the verdict is LGTM"),
  agents: (project) => {
    project.writeAgent("writer", {});
    project.writeAgent("checker", {
      triggers: [
        {
          after: { agent: "writer", status: ["completed"] },
          task: "Check run {{upstream.id}} ({{upstream.status}}): {{upstream.result}}",
        },
      ],
    });
    // A cycle: each follows the other; one bounce, never a loop.
    project.writeAgent("ping", { triggers: [{ after: { agent: "pong" } }] });
    project.writeAgent("pong", { triggers: [{ after: { agent: "ping" } }] });
    mkdirSync(path.join(project.root, "work", "inbox"), { recursive: true });
    project.writeAgent("watcher", {
      workdir: "./work",
      triggers: [{ watch: { path: "inbox", glob: "*.txt", debounce: "300ms" }, task: "New: {{paths}}" }],
    });
  },
});

async function runs(agent: string): Promise<Run[]> {
  const reply = await scripted.daemon.request("GET", `/runs?agent=${agent}`);
  return (reply.body as { runs: Run[] }).runs;
}

async function startRun(agent: string): Promise<string> {
  const reply = await scripted.daemon.request("POST", `/agents/${agent}/runs`, { task: "go" });
  expect(reply.status).toBe(202);
  return (reply.body as { run: string }).run;
}

describe("after triggers", { timeout: 90_000 }, () => {
  it("starts the follower when the upstream run completes, with its result", async () => {
    const upstream = await startRun("writer");
    const [follower] = await waitFor(async () => {
      const found = await runs("checker");
      return found.length > 0 && found;
    }, "the checker's run");
    expect(follower?.trigger).toEqual({ kind: "after", name: "after-writer", id: upstream });
    expect(follower?.task).toBe(`Check run ${upstream} (completed): the verdict is LGTM`);
  });

  it("refuses the run that would close a cycle of agents", async () => {
    const first = await startRun("ping");
    const [pong] = await waitFor(async () => {
      const found = await runs("pong");
      return found.length > 0 && found;
    }, "pong's run");
    expect(pong?.trigger).toMatchObject({ kind: "after", id: first });
    await waitFor(
      () => scripted.daemon.stderr().includes("an after trigger would start a cycle of agents"),
      "the cycle refused",
    );
    expect((await runs("ping")).map((run) => run.id)).toEqual([first]);
  });
});

describe("watch triggers", { timeout: 90_000 }, () => {
  it("starts a run with the added and changed files the glob matches, not symlinks or others", async () => {
    expect(scripted.daemon.stderr()).toContain("watch trigger ready");
    const inbox = path.join(scripted.project.root, "work", "inbox");
    symlinkSync("/etc/hostname", path.join(inbox, "link.txt"));
    writeFileSync(path.join(inbox, "notes.md"), "not matched");
    writeFileSync(path.join(inbox, "a.txt"), "first");
    writeFileSync(path.join(inbox, "b.txt"), "second");
    // A loaded machine may split the burst over two debounce windows: collect until both are seen.
    const started = await waitFor(async () => {
      const found = await runs("watcher");
      const tasks = found.map((run) => run.task).join("\n");
      return tasks.includes("a.txt") && tasks.includes("b.txt") && found;
    }, "the watcher's runs");
    for (const run of started) {
      expect(run.trigger).toEqual({ kind: "watch", name: "watch-1" });
      expect(run.task).toMatch(/^New: /);
      expect(run.task).not.toContain("link.txt");
      expect(run.task).not.toContain("notes.md");
    }
  });
});
