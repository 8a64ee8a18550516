import { mkdirSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import path from "node:path";
import { Command } from "commander";
import { afterEach, describe, expect, it } from "vitest";
import { registerAgentsCommand } from "../../src/cli/commands/agents.js";
import { registerApprovalsCommand } from "../../src/cli/commands/approvals.js";
import { registerApproveCommand } from "../../src/cli/commands/approve.js";
import { registerDenyCommand } from "../../src/cli/commands/deny.js";
import { registerEventsCommand } from "../../src/cli/commands/events.js";
import { registerRunsCommand } from "../../src/cli/commands/runs.js";
import { registerStopCommand } from "../../src/cli/commands/stop.js";
import type { ClientCommandIo } from "../../src/cli/daemon-client.js";
import { AgentdError } from "../../src/errors/agentd-error.js";
import { type ApiFixture, startApiFixture } from "../api/api-fixture.js";
import { waitFor } from "../support/wait-for.js";

const TOKEN = "client-token";

interface Cli {
  out: string[];
  err: string[];
  run(...argv: string[]): Promise<void>;
}

/** The client commands on a commander program, configured by a real config file for the fixture. */
function cli(fixture: ApiFixture, options: { token?: string; stop?: AbortSignal } = {}): Cli {
  const port = new URL(fixture.url).port;
  const configFile = path.join(fixture.dataDirectory, "config.yaml");
  writeFileSync(
    configFile,
    `server:\n  host: 0.0.0.0\n  port: ${port}\n  token: ${options.token ?? TOKEN}\n`,
  );
  const out: string[] = [];
  const err: string[] = [];
  const io: ClientCommandIo = {
    out: (line) => out.push(line),
    err: (line) => err.push(line),
    environment: {},
    ...(options.stop ? { stop: options.stop } : {}),
  };
  return {
    out,
    err,
    async run(...argv) {
      const program = new Command("agentd").option("--config <file>").option("--json").exitOverride();
      for (const register of [
        registerAgentsCommand,
        registerEventsCommand,
        registerRunsCommand,
        registerStopCommand,
        registerApprovalsCommand,
        registerApproveCommand,
        registerDenyCommand,
      ]) {
        register(program, io);
      }
      await program.parseAsync(["--config", configFile, ...argv], { from: "user" });
    },
  };
}

/** A port nothing listens on (just released). */
function freePort(): Promise<number> {
  return new Promise<number>((resolve) => {
    const probe = createServer().listen(0, "127.0.0.1", () => {
      const address = probe.address();
      probe.close(() => resolve(typeof address === "object" && address ? address.port : 0));
    });
  });
}

async function thrown(promise: Promise<unknown>): Promise<AgentdError> {
  const error = await promise.then(
    () => undefined,
    (failure: unknown) => failure,
  );
  if (!(error instanceof AgentdError)) throw new Error(`expected an AgentdError, got ${String(error)}`);
  return error;
}

/** Starts a run of the fixture's `writer` agent, as a client would. */
async function startWriterRun(fixture: ApiFixture): Promise<void> {
  await fixture.request("/agents/writer/runs", {
    method: "POST",
    headers: { "content-type": "application/json" },
  });
}

describe("client commands", () => {
  let fixture: ApiFixture;
  afterEach(() => fixture.close());

  it("prints an agent's events as text or JSON lines, from --after", async () => {
    fixture = await startApiFixture({ token: TOKEN });
    await startWriterRun(fixture);
    const text = cli(fixture);
    await text.run("events", "writer");
    expect(text.out).toHaveLength(4);
    expect(text.out[0]).toMatch(/^#1 \d\d:\d\d:\d\d r_1 status +running$/);
    expect(text.out[3]).toMatch(/^#4 .* status +completed$/);
    expect(text.out[2]).toContain("done [15 tokens, $0.2500]");

    const json = cli(fixture);
    await json.run("--json", "events", "writer", "--after", "2");
    expect(json.out.map((line) => (JSON.parse(line) as { id: number }).id)).toEqual([3, 4]);
  });

  it("warns when events were dropped from memory before being read", async () => {
    fixture = await startApiFixture({ token: TOKEN, bufferSize: 2 });
    await startWriterRun(fixture);
    const reader = cli(fixture);
    await reader.run("events", "writer");
    expect(reader.out).toHaveLength(2);
    expect(reader.err.join("\n")).toMatch(/2 event\(s\) of writer after #0 are no longer in memory/);
  });

  it("follows new events until stopped", async () => {
    fixture = await startApiFixture({ token: TOKEN });
    const stop = new AbortController();
    const follower = cli(fixture, { stop: stop.signal });
    const following = follower.run("events", "writer", "--follow");
    await waitFor(() => fixture.store.waiting === 1, "fixture.store.waiting === 1");
    fixture.bus.publish({ agent: "writer", run: null, type: "thought", data: { text: "first news" } });
    await waitFor(() => follower.out.length === 1, "follower.out.length === 1");
    fixture.bus.publish({ agent: "writer", run: null, type: "thought", data: { text: "second news" } });
    await waitFor(() => follower.out.length === 2, "follower.out.length === 2");
    stop.abort();
    await following;
    expect(follower.out[0]).toMatch(/^#1 .* - thought +first news$/);
    expect(follower.out[1]).toMatch(/^#2 .* - thought +second news$/);
  });

  it("lists runs, rejects a bad --status as usage, and stops runs", async () => {
    fixture = await startApiFixture({ token: TOKEN });
    await startWriterRun(fixture);
    const runs = cli(fixture);
    await startWriterRun(fixture);
    await runs.run("runs", "--agent", "writer");
    // A header, then the runs, each column starting where its header does.
    expect(runs.out).toHaveLength(3);
    expect(runs.out[0]).toMatch(/^RUN +AGENT +STATUS +CREATED +COST +TRIGGER$/);
    for (const line of runs.out.slice(1)) {
      expect(line).toMatch(
        /^r_\d {2}writer {2}completed {2}\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ {2}\$\d+\.\d{4} {2}api$/,
      );
    }
    const header = runs.out[0] ?? "";
    for (const name of ["AGENT", "STATUS", "CREATED", "TRIGGER"]) {
      const column = header.indexOf(name);
      for (const line of runs.out.slice(1)) expect(line[column - 1]).toBe(" ");
      for (const line of runs.out.slice(1)) expect(line[column]).not.toBe(" ");
    }
    await runs.run("--json", "runs", "--status", "failed");
    expect(runs.out).toHaveLength(3);

    expect((await thrown(runs.run("runs", "--status", "sleeping"))).code).toBe("USAGE");
    expect((await thrown(runs.run("events", "writer", "--after", "soon"))).code).toBe("USAGE");
    expect((await thrown(runs.run("stop", "r_1"))).code).toBe("CONFLICT");
    expect((await thrown(runs.run("stop", "r_404"))).code).toBe("NOT_FOUND");
  });

  it("lists approvals and answers them", async () => {
    fixture = await startApiFixture({ token: TOKEN });
    fixture.approvals.pending = [
      { id: "ap_1", agent: "writer", run: "r_1", tool: "shell", arguments: { command: "ls" } },
      { id: "ap_2", agent: "writer", run: "r_1", tool: "write_file" },
    ];
    const user = cli(fixture);
    await user.run("approvals");
    expect(user.out).toEqual([
      'ap_1  writer  r_1  shell {"command":"ls"}',
      "ap_2  writer  r_1  write_file {}",
    ]);
    await user.run("approve", "ap_1", "--for-run");
    await user.run("deny", "ap_2");
    expect(fixture.approvals.decisions).toEqual([
      { id: "ap_1", decision: "approve", scope: "run" },
      { id: "ap_2", decision: "deny", scope: "once" },
    ]);
    expect(user.out.slice(2)).toEqual(["approved ap_1 for the rest of the run", "denied ap_2"]);
    await user.run("approvals");
    expect(user.out.at(-1)).toBe("no pending approvals");
    expect((await thrown(user.run("deny", "ap_2"))).code).toBe("APPROVAL_NOT_FOUND");
  });

  it("lists the daemon's agents with their next fire and last run", async () => {
    fixture = await startApiFixture({ token: TOKEN });
    const writer = fixture.agents.agents.get("writer");
    if (!writer) throw new Error("fixture without writer");
    fixture.agents.agents.set("writer", {
      ...writer,
      schedule: { cron: "0 9 * * *", timezone: "Europe/Berlin" },
      next_fire: "2030-01-01T08:00:00.000Z",
      last_run: { id: "r_1", status: "failed", reason: "timeout", ended_at: null },
    });
    const user = cli(fixture);
    await user.run("--json", "agents");
    const listed = user.out.map((line) => JSON.parse(line) as Record<string, unknown>);
    // By id, as the daemon lists them.
    expect(listed).toMatchObject([
      { id: "broken", valid: false, worker: null },
      {
        id: "writer",
        valid: true,
        schedule: "0 9 * * * (Europe/Berlin)",
        next_fire: "2030-01-01T08:00:00.000Z",
        last_run: { id: "r_1", status: "failed", reason: "timeout" },
      },
    ]);
    user.out.length = 0;
    await user.run("agents");
    const [header, , writerLine] = user.out.join("\n").split("\n");
    expect(header).toMatch(/^ID +NAME +STATUS +WORKER +SCHEDULE +NEXT FIRE +LAST RUN +DESCRIPTION$/);
    expect(writerLine).toContain("2030-01-01T08:00:00.000Z");
    expect(writerLine).toContain("failed (timeout) r_1");
  });

  it("lists the agent files, saying so, when no daemon answers", async () => {
    fixture = await startApiFixture();
    const port = await freePort();
    const agentsDirectory = path.join(fixture.dataDirectory, "agents");
    mkdirSync(agentsDirectory);
    writeFileSync(
      path.join(agentsDirectory, "notes.md"),
      "---\ndescription: takes notes\n---\nTake notes.\n",
    );
    const configFile = path.join(fixture.dataDirectory, "files.yaml");
    writeFileSync(configFile, `agents_dir: ./agents\nserver:\n  port: ${port}\n`);
    const out: string[] = [];
    const err: string[] = [];
    const program = new Command("agentd").option("--config <file>").option("--json").exitOverride();
    registerAgentsCommand(program, {
      out: (line) => out.push(line),
      err: (line) => err.push(line),
      environment: {},
    });
    await program.parseAsync(["--config", configFile, "--json", "agents"], { from: "user" });
    expect(out.map((line) => JSON.parse(line) as unknown)).toMatchObject([
      { id: "notes", valid: true, description: "takes notes", next_fire: null },
    ]);
    expect(err.join("\n")).toContain(`no agentd daemon at http://127.0.0.1:${port}`);
  });

  it("says so when the token is wrong", async () => {
    fixture = await startApiFixture({ token: TOKEN });
    const error = await thrown(cli(fixture, { token: "other" }).run("runs"));
    expect(error.code).toBe("UNAUTHORIZED");
    expect(error.hint).toContain("AGENTD_TOKEN");
  });

  it("says so when no daemon answers", async () => {
    fixture = await startApiFixture();
    const port = await freePort();
    const io: ClientCommandIo = {
      out: () => undefined,
      err: () => undefined,
      environment: { AGENTD_URL: `http://127.0.0.1:${port}` },
    };
    const program = new Command("agentd").option("--config <file>").option("--json").exitOverride();
    registerRunsCommand(program, io);
    const configFile = path.join(fixture.dataDirectory, "empty.yaml");
    writeFileSync(configFile, "{}\n");
    const error = await thrown(program.parseAsync(["--config", configFile, "runs"], { from: "user" }));
    expect(error.code).toBe("DAEMON_UNREACHABLE");
    expect(error.message).toBe(`no agentd daemon at http://127.0.0.1:${port} — start one with agentd start`);
  });
});
