import { execFileSync, spawn } from "node:child_process";
import { once } from "node:events";
import { existsSync, mkdirSync, readFileSync, symlinkSync } from "node:fs";
import { open } from "node:fs/promises";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { AGENTD_MAIN, environmentWithoutAgentd } from "../support/agentd-cli.js";
import { closedPort } from "../support/closed-port.js";
import { killGroup } from "../support/daemon-process.js";
import { rawRequest } from "../support/raw-http.js";
import { useTestKit } from "../support/test-kit.js";

const kit = useTestKit();

/**
 * A daemon caught in the middle of its start: one of its agent files is a link to a named pipe, so
 * reading the agents holds the start, after the lock is taken and the port listens, until the test
 * writes that agent's text. `inside` resolves once the daemon opened the pipe (it is starting).
 * (The parsed-agents cache in data_dir served as the pipe before; a FIFO there is now refused.)
 */
async function daemonHeldWhileStarting() {
  const port = await closedPort();
  const workspace = kit.project({ config: { server: { host: "127.0.0.1", port } } });
  workspace.writeAgent("helper", { task: "help" });
  const pipe = path.join(workspace.root, "held-agent.pipe");
  execFileSync("mkfifo", [pipe]);
  mkdirSync(workspace.agentsDirectory, { recursive: true });
  symlinkSync(pipe, path.join(workspace.agentsDirectory, "held.md"));
  const child = spawn(process.execPath, [AGENTD_MAIN, "start", "--config", workspace.configFile], {
    cwd: workspace.root,
    env: environmentWithoutAgentd(),
    stdio: ["ignore", "pipe", "pipe"],
    detached: true,
  });
  kit.defer(() => killGroup(child.pid ?? 0));
  let stderr = "";
  child.stderr.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk));
  child.stdout.resume();
  const exited = once(child, "exit").then(([code, signal]) => ({ code: code as number | null, signal }));
  // Opening a pipe for writing waits for its reader: the daemon is inside its start.
  const writer = await Promise.race([
    open(pipe, "w"),
    exited.then(() => Promise.reject(new Error(`the daemon ended before reading its cache:\n${stderr}`))),
  ]);
  return {
    url: `http://127.0.0.1:${port}`,
    workspace,
    child,
    exited,
    stderr: () => stderr,
    /** Lets the start go on: the held agent's text comes through the pipe. */
    release: async () => {
      await writer.write("---\ndescription: held\n---\nHold on.\n");
      await writer.close();
    },
  };
}

describe("a daemon still starting", () => {
  it("shuts down cleanly on SIGTERM: exit 0, the data folder's lock released", async () => {
    const daemon = await daemonHeldWhileStarting();
    const lockFile = path.join(daemon.workspace.dataDirectory, "agentd.lock");
    expect(existsSync(lockFile)).toBe(true);
    daemon.child.kill("SIGTERM");
    await daemon.release();
    expect(await daemon.exited, daemon.stderr()).toEqual({ code: 0, signal: null });
    expect(existsSync(lockFile)).toBe(false);
  });

  it("answers malformed requests with the usual error body", async () => {
    const daemon = await daemonHeldWhileStarting();
    // Refused by Node's parser while the daemon cannot yet route anything.
    const tooLarge = rawRequest(daemon.url, {
      path: "/agents",
      headers: { "x-large": "a".repeat(64 * 1024) },
    });
    const token = readFileSync(path.join(daemon.workspace.dataDirectory, "api.token"), "utf8").trim();
    // Held until the API is up, then answered by it.
    const brokenJson = rawRequest(daemon.url, {
      method: "POST",
      path: "/agents/helper/runs",
      headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
      body: "{not json",
    });
    await daemon.release();
    expect(await tooLarge).toMatchObject({ status: 431, body: { error: { code: "HEADERS_TOO_LARGE" } } });
    const broken = await brokenJson;
    expect(broken.status).toBe(400);
    expect(broken.body).toMatchObject({ error: { code: "BAD_REQUEST", message: expect.any(String) } });
    daemon.child.kill("SIGTERM");
    expect(await daemon.exited).toEqual({ code: 0, signal: null });
  });
});
