import { execFileSync } from "node:child_process";
import { mkdirSync, readdirSync, readFileSync, statSync, symlinkSync, writeFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { agentd } from "../support/agentd-cli.js";
import { textReply } from "../support/scripted-llm-server.js";
import { useTestKit } from "../support/test-kit.js";
import { waitFor } from "../support/wait-for.js";
import { startRun, waitForRunEnd } from "./api-shapes.js";

const kit = useTestKit();

/**
 * data_dir's state files other than the run and event files (their damage is in
 * damaged-run-files and crash-recovery) with something else in their place. Reading a FIFO waits for
 * a writer that never comes: each held the start (or one of libuv's four threads, then every file
 * operation) for ever. A damaged switches file stopped the start with its error, then never exited.
 */
describe("data_dir's state files damaged at a start", () => {
  it("starts and runs agents with a FIFO where each state file should be", async () => {
    const { project } = await kit.scriptedProject(() => textReply("done"));
    project.writeAgent("worker", { memory: "write" });
    const data = project.dataDirectory;
    for (const file of [
      "tokens.json",
      "schedules.json",
      "cli-cooldowns.json",
      "deliveries.json",
      "vault.json",
    ]) {
      mkdirSync(path.dirname(path.join(data, file)), { recursive: true });
      execFileSync("mkfifo", [path.join(data, file)]);
    }
    const daemon = await kit.daemon(project.configFile);
    const run = await startRun(daemon, "worker", "go");
    expect(await waitForRunEnd(daemon, run)).toMatchObject({ status: "completed" });
    expect((await daemon.request("GET", "/health")).body).toMatchObject({ status: "ok" });
  });

  // Before: the parsed-agents cache was read with a plain readFileSync: a FIFO held the start for
  // ever, a link to /dev/zero read until memory ran out.
  it("starts and runs agents with a FIFO or a link to /dev/zero where the parsed-agents cache should be", async () => {
    for (const make of [
      (file: string) => execFileSync("mkfifo", [file]),
      (file: string) => symlinkSync("/dev/zero", file),
    ]) {
      const { project } = await kit.scriptedProject(() => textReply("done"));
      project.writeAgent("worker", {});
      mkdirSync(path.join(project.dataDirectory, "cache"), { recursive: true });
      make(path.join(project.dataDirectory, "cache", "agents.json"));
      const daemon = await kit.daemon(project.configFile);
      const run = await startRun(daemon, "worker", "go");
      expect(await waitForRunEnd(daemon, run)).toMatchObject({ status: "completed" });
      await daemon.kill();
    }
  });

  it("moves a folder where schedules.json should be aside, and keeps its schedules", async () => {
    const { project } = await kit.scriptedProject(() => textReply("done"));
    project.writeAgent("ticker", { schedule: { cron: "0 0 1 1 *", task: "tick" } });
    project.writeAgent("worker", {});
    const data = project.dataDirectory;
    mkdirSync(path.join(data, "schedules.json", "inner"), { recursive: true });
    const daemon = await kit.daemon(project.configFile);
    const run = await startRun(daemon, "worker", "go");
    expect(await waitForRunEnd(daemon, run)).toMatchObject({ status: "completed" });
    expect((await daemon.request("GET", "/health")).body).toMatchObject({ status: "ok" });
    // The first rewrite took its place: a file with the schedule's state.
    await waitFor(() => statSync(path.join(data, "schedules.json")).isFile(), "schedules.json rewritten");
    expect(JSON.parse(readFileSync(path.join(data, "schedules.json"), "utf8"))).toMatchObject({
      agents: { ticker: { checked_at: expect.any(String) } },
    });
    const aside = readdirSync(data).filter((name) => name.startsWith("schedules.json.damaged-"));
    expect(aside).toHaveLength(1);
    expect(readdirSync(path.join(data, aside[0] ?? ""))).toEqual(["inner"]);
    expect(daemon.stderr()).toMatch(
      /moved \S+schedules\.json aside \(cannot be read \(EISDIR\)\): missed fires/,
    );
  });

  it("stops with the file and what to do when the switches file cannot be read, and exits", async () => {
    const { project } = await kit.scriptedProject(() => textReply("done"));
    project.writeAgent("worker", {});
    mkdirSync(project.dataDirectory, { recursive: true });
    writeFileSync(path.join(project.dataDirectory, "agent-switches.json"), '{"disabled": {"wor');
    const start = await agentd(["start", "--config", project.configFile], {
      cwd: project.root,
      timeoutMilliseconds: 30_000,
    });
    expect({ exitCode: start.exitCode, timedOut: start.timedOut }).toEqual({ exitCode: 1, timedOut: false });
    expect(start.stderr).toMatch(/error STORE_CORRUPT: .*agent-switches\.json.*fix or delete it/);
  });

  // Before: `error INTERNAL: EISDIR: illegal operation on a directory`, with no file's role or hint.
  it("says what is there and what to do when a folder is where the switches file should be", async () => {
    const { project } = await kit.scriptedProject(() => textReply("done"));
    project.writeAgent("worker", {});
    mkdirSync(path.join(project.dataDirectory, "agent-switches.json"), { recursive: true });
    const start = await agentd(["start", "--config", project.configFile], {
      cwd: project.root,
      timeoutMilliseconds: 30_000,
    });
    expect({ exitCode: start.exitCode, timedOut: start.timedOut }).toEqual({ exitCode: 1, timedOut: false });
    expect(start.stderr).toMatch(
      /error STORE_CORRUPT: .*agent-switches\.json is a folder, not a switches file.*move it aside/s,
    );
  });
});

describe("a damaged api.token at a start", () => {
  it("stops with the file and what to do when the token holds a character no client can send", async () => {
    const { project } = await kit.scriptedProject(() => textReply("done"));
    mkdirSync(project.dataDirectory, { recursive: true });
    writeFileSync(path.join(project.dataDirectory, "api.token"), "Zm9v\u0001YmFy\u0007\n");
    const start = await agentd(["start", "--config", project.configFile], {
      cwd: project.root,
      timeoutMilliseconds: 30_000,
    });
    expect({ exitCode: start.exitCode, timedOut: start.timedOut }).toEqual({ exitCode: 1, timedOut: false });
    expect(start.stderr).toMatch(/error STORE_CORRUPT: .*api\.token.*control character.*delete it/);
  });

  it("says to move a folder aside or set server.token when api.token is a folder", async () => {
    const { project } = await kit.scriptedProject(() => textReply("done"));
    mkdirSync(path.join(project.dataDirectory, "api.token"), { recursive: true });
    const start = await agentd(["start", "--config", project.configFile], {
      cwd: project.root,
      timeoutMilliseconds: 30_000,
    });
    expect({ exitCode: start.exitCode, timedOut: start.timedOut }).toEqual({ exitCode: 1, timedOut: false });
    expect(start.stderr).toMatch(/api\.token.*move aside.*server\.token/s);
    expect(start.stderr).not.toMatch(/AGENTD_TOKEN/);
  });
});
