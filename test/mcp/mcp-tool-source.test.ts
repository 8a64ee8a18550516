import pidtree from "pidtree";
import { readFile } from "node:fs/promises";
import { PassThrough } from "node:stream";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { AgentdError } from "../../src/errors/agentd-error.js";
import { createLogger } from "../../src/logging/logger.js";
import { RunControl } from "../../src/run-vocabulary/run-control.js";
import { SecretRedactor } from "../../src/secrets/secret-redactor.js";
import { EnvVault } from "../../src/vault/env-vault.js";
import { resolveConfigSecrets } from "../../src/vault/resolve-config-secrets.js";
import { isProcessRunning } from "../../src/processes/process-tree.js";
import { makeDefinition } from "../support/make-definition.js";
import { configWith, fixtureServer, mcpHarness } from "./mcp-test-kit.js";
import { waitFor } from "../support/wait-for.js";

const ECHO = { tools: ["mcp:fixture/echo"], permissions: { allow: ["mcp:fixture/echo"] } };
const ALL = { tools: ["mcp:fixture/*"], permissions: { allow: ["mcp:fixture/*"] } };

let closeHarness: (() => Promise<void>) | undefined;
afterEach(async () => {
  await closeHarness?.();
  closeHarness = undefined;
});

function harness(config = configWith({ fixture: fixtureServer() }), redactor = new SecretRedactor()) {
  const made = mcpHarness(config, redactor);
  closeHarness = () => made.source.close();
  return made;
}

/** Fixture servers this test process started that are still running. */
async function runningFixtureServers(): Promise<number[]> {
  const pids = await pidtree(process.pid).catch(() => [] as number[]);
  const servers: number[] = [];
  for (const pid of pids) {
    const commandLine = await readFile(`/proc/${pid}/cmdline`, "utf8").catch(() => "");
    // bubblewrap's own processes carry the server's command line too: count node only.
    const program = commandLine.split("\0")[0] ?? "";
    if (commandLine.includes("fixture-server.mjs") && !program.endsWith("bwrap") && isProcessRunning(pid))
      servers.push(pid);
  }
  return servers;
}

/** Every process this test process started (the host's pids: the server runs in its own PID namespace). */
async function descendants(): Promise<number[]> {
  return pidtree(process.pid).catch(() => [] as number[]);
}

describe("McpToolSource over stdio", () => {
  // Calls that leave the server as it was share one server; the tests after this block start their own.
  describe("on one server", () => {
    let shared: ReturnType<typeof mcpHarness>;
    beforeAll(() => {
      shared = mcpHarness(configWith({ fixture: fixtureServer() }));
    });
    afterAll(() => shared.source.close());

    it("offers a listed tool under its model name with the server's schema", async () => {
      const { executor } = shared;
      const specs = await executor.specs(makeDefinition({ frontmatter: ECHO }));
      expect(specs).toHaveLength(1);
      expect(specs[0]?.name).toBe("mcp__fixture__echo");
      expect(specs[0]?.description).toContain("Returns the text it is given");
      expect(specs[0]?.description).toContain("fixture");
      expect(specs[0]?.parameters).toMatchObject({
        type: "object",
        properties: { text: { type: "string" } },
        required: ["text"],
      });
    });

    it("expands mcp:<server>/* to every tool of the server", async () => {
      const { executor } = shared;
      const specs = await executor.specs(makeDefinition({ frontmatter: ALL }));
      expect(specs.map((spec) => spec.name).sort()).toEqual(
        ["add", "big", "crash", "echo", "env", "env_names", "fail", "grow", "meta", "pids", "slow"].map(
          (tool) => `mcp__fixture__${tool}`,
        ),
      );
    });

    it("returns the server's text and reports the call as action and observation events", async () => {
      const { call, events } = shared;
      const before = events.length;
      const result = await call(ECHO, "mcp__fixture__echo", { text: "hello" });
      expect(result).toMatchObject({ ok: true, output: "echo: hello" });
      const added = await call(ALL, "mcp__fixture__add", { a: 2, b: 40 });
      expect(added).toMatchObject({ ok: true, output: "42" });
      const these = events.slice(before);
      expect(these.map((event) => event.type)).toEqual(["action", "observation", "action", "observation"]);
      expect(these[0]?.data).toMatchObject({ tool: "mcp:fixture/echo", arguments: { text: "hello" } });
    });

    it("turns isError into ok false with the server's text", async () => {
      const { call } = shared;
      const result = await call(ALL, "mcp__fixture__fail", {});
      expect(result).toMatchObject({
        ok: false,
        code: "TOOL_FAILED",
        output: "the fixture failed on purpose",
      });
    });

    it("lets the server judge the arguments, but refuses arguments that are not an object", async () => {
      const { call } = shared;
      const wrong = await call(ECHO, "mcp__fixture__echo", { text: 7 });
      expect(wrong.ok).toBe(false);
      expect(wrong.output).toMatch(/text/);
      const notObject = await call(ECHO, "mcp__fixture__echo", ["hello"]);
      expect(notObject).toMatchObject({ ok: false, code: "TOOL_BAD_ARGUMENTS" });
    });

    it("applies permission rules by the mcp:<server>/<tool> name and the arguments", async () => {
      const { call } = shared;
      const denied = await call(
        { tools: ["mcp:fixture/*"], permissions: { allow: ["mcp:fixture/*"], deny: ["mcp:fixture/echo"] } },
        "mcp__fixture__echo",
        { text: "hello" },
      );
      expect(denied).toMatchObject({ ok: false, code: "TOOL_DENIED" });
      const byArguments = await call(
        {
          tools: ["mcp:fixture/echo"],
          permissions: { allow: ["mcp:fixture/echo"], deny: ["mcp:fixture/echo(*secret*)"] },
        },
        "mcp__fixture__echo",
        { text: "the secret plan" },
      );
      expect(byArguments).toMatchObject({ ok: false, code: "TOOL_DENIED" });
      // No rule names it: ask, and no one approves in this harness.
      const unlisted = await call({ tools: ["mcp:fixture/echo"] }, "mcp__fixture__echo", { text: "hello" });
      expect(unlisted).toMatchObject({ ok: false, code: "TOOL_DENIED" });
      const other = await call(ECHO, "mcp__fixture__add", { a: 1, b: 2 });
      expect(other).toMatchObject({ ok: false, code: "TOOL_NOT_FOUND" });
    });

    it("finds nothing for an unknown server or tool", async () => {
      const { source, executor } = shared;
      expect(await source.find("mcp:nowhere/echo")).toBeUndefined();
      expect(await source.find("mcp:fixture/nothing")).toBeUndefined();
      const specs = await executor.specs(
        makeDefinition({ frontmatter: { tools: ["mcp:nowhere/*", "mcp:fixture/echo"] } }),
      );
      expect(specs.map((spec) => spec.name)).toEqual(["mcp__fixture__echo"]);
    });
  });

  it("passes the config env over the daemon's environment", async () => {
    const { call } = harness(configWith({ fixture: fixtureServer([], { FIXTURE_GREETING: "bonjour" }) }));
    expect(await call(ALL, "mcp__fixture__env", { name: "FIXTURE_GREETING" })).toMatchObject({
      output: "bonjour",
    });
    expect((await call(ALL, "mcp__fixture__env", { name: "PATH" })).output).toBe(process.env["PATH"]);
  });

  it("gives a stdio server its {{secret:name}} env from the vault, masked in what the model reads", async () => {
    const redactor = new SecretRedactor();
    const config = await resolveConfigSecrets(
      configWith({ fixture: fixtureServer([], { FIXTURE_TOKEN: "{{secret:fixture_token}}" }) }),
      new EnvVault({ AGENTD_SECRET_FIXTURE_TOKEN: "tok-5f3a9c" }),
      redactor,
    );
    const { call } = harness(config, redactor);
    const result = await call(ALL, "mcp__fixture__env", { name: "FIXTURE_TOKEN" });
    expect(result).toMatchObject({ ok: true, output: "[secret:fixture_token]" });
  });

  it("gives up on a call after tools.http_timeout, and ends it at once when the run stops", async () => {
    const { call, events } = harness(configWith({ fixture: fixtureServer() }, { http_timeout: 1_500 }));
    const late = await call(ALL, "mcp__fixture__slow", {});
    expect(late).toMatchObject({ ok: false, code: "TOOL_TIMEOUT" });
    expect(late.output).toMatch(/did not answer within 1500 ms/);
    const control = new RunControl();
    const stopped = call(ALL, "mcp__fixture__slow", {}, control);
    await waitFor(() => events.filter((event) => event.type === "action").length === 2, "two action events");
    control.stop("user_stop");
    await expect(stopped).rejects.toMatchObject({ code: "RUN_ABORTED" });
  });

  it("lists the tools again when the server says they changed", async () => {
    const { call, source } = harness();
    expect(await source.find("mcp:fixture/grown")).toBeUndefined();
    expect(await call(ALL, "mcp__fixture__grow", {})).toMatchObject({ ok: true });
    await waitFor(async () => (await source.find("mcp:fixture/grown")) !== undefined, "the grown tool");
  });

  it("offers a tool the server added to an agent whose definition did not change", async () => {
    const { executor, call } = harness();
    const definition = makeDefinition({ frontmatter: ALL });
    const before = (await executor.specs(definition)).map((spec) => spec.name);
    expect(before).not.toContain("mcp__fixture__grown");
    expect(await call(ALL, "mcp__fixture__grow", {})).toMatchObject({ ok: true });
    await waitFor(
      async () => (await executor.specs(definition)).some((spec) => spec.name === "mcp__fixture__grown"),
      "the grown tool offered to the model",
    );
  });

  it("starts a server once for concurrent first uses", async () => {
    const { source } = harness();
    const listings = await Promise.all([1, 2, 3].map(() => source.expand("mcp:fixture/*")));
    expect(listings.every((tools) => tools.length === 11)).toBe(true);
    expect(await runningFixtureServers()).toHaveLength(1);
  });

  it("reports a server that dies mid-call and starts it again on the next use", async () => {
    const { call } = harness();
    const crashed = await call(ALL, "mcp__fixture__crash", {});
    expect(crashed).toMatchObject({ ok: false, code: "MCP_UNAVAILABLE" });
    expect(crashed.output).toContain('MCP server "fixture"');
    const again = await call(ALL, "mcp__fixture__echo", { text: "back" });
    expect(again).toMatchObject({ ok: true, output: "echo: back" });
  });

  it("says which server could not start and what to check, and keeps serving the others", async () => {
    const { executor, call } = harness(
      configWith({
        broken: { command: "/nonexistent/mcp-server", args: ["--stdio"] },
        fixture: fixtureServer(),
      }),
    );
    const failure = await executor
      .specs(makeDefinition({ frontmatter: { tools: ["mcp:broken/*"] } }))
      .catch((error: unknown) => error);
    expect(AgentdError.is(failure, "MCP_UNAVAILABLE")).toBe(true);
    expect((failure as AgentdError).describe()).toMatch(
      /MCP server "broken" \(\/nonexistent\/mcp-server --stdio\)/,
    );
    expect((failure as AgentdError).describe()).toContain("mcp_servers.broken");
    expect(await call(ECHO, "mcp__fixture__echo", { text: "still here" })).toMatchObject({ ok: true });
  });

  it("never quotes a stderr line its 2,000-character tail begins inside", async () => {
    const secret = "sk-live-7f3a9c1e5b2d8f4a6c0e9b7d";
    // The tail keeps the last 2,000 characters: they begin 12 characters before the secret's end.
    // Written upper case in the command (shown in the error), lower case by the server.
    const script = `{ printf '%s%s\\nstartup failed\\n' '${secret.toUpperCase()}' "$(printf 'y%.0s' $(seq ${2_000 - 12 - 15}))" | tr A-Z a-z; } >&2; exit 1`;
    const { executor } = harness(configWith({ broken: { command: "/bin/sh", args: ["-c", script] } }));
    const failure = await executor
      .specs(makeDefinition({ frontmatter: { tools: ["mcp:broken/*"] } }))
      .catch((error: unknown) => error);
    expect(AgentdError.is(failure, "MCP_UNAVAILABLE")).toBe(true);
    const described = (failure as AgentdError).describe();
    expect(described).toContain("startup failed");
    expect(described).not.toContain(secret.slice(-8));
  });

  it("debug-logs its stderr in whole lines, so a vault value written in two pieces is masked", async () => {
    const secret = "sk-live-7f3a9c1e5b2d8f4a6c0e9b7d";
    const redactor = new SecretRedactor();
    redactor.add("api_key", secret);
    const destination = new PassThrough();
    let log = "";
    destination.on("data", (chunk: Buffer) => (log += chunk.toString("utf8")));
    const logger = createLogger({
      level: "debug",
      pretty: false,
      redact: (text) => redactor.redact(text),
      destination,
    });
    // Two writes with a pause between: two chunks on the daemon's side.
    // (The halves come from its environment: the command line is quoted in the failure message.)
    const script = `printf 'key %s' "$FIRST" >&2; sleep 0.3; printf '%s used\n' "$SECOND" >&2; exit 1`;
    const env = { FIRST: secret.slice(0, 14), SECOND: secret.slice(14) };
    const made = mcpHarness(
      configWith({ broken: { command: "/bin/sh", args: ["-c", script], env } }),
      redactor,
      logger,
    );
    closeHarness = () => made.source.close();
    const failure = await made.executor
      .specs(makeDefinition({ frontmatter: { tools: ["mcp:broken/*"] } }))
      .catch((error: unknown) => error);
    expect(AgentdError.is(failure, "MCP_UNAVAILABLE")).toBe(true);
    expect(log).toContain('"stderr":"key [secret:api_key] used"');
    console.log(log);
    expect(log).not.toContain(secret.slice(0, 14));
    expect(log).not.toContain(secret.slice(14));
  });

  it("close() ends the server and every process it started", async () => {
    const { call, source } = harness(configWith({ fixture: fixtureServer(["--with-helper"]) }));
    const result = await call(ALL, "mcp__fixture__pids", {});
    const pids = JSON.parse(result.output) as { server: number; helper: number };
    expect(pids.helper).toBeGreaterThan(0);
    const started = await descendants();
    // bubblewrap (2), the server and its helper.
    expect(started.length).toBeGreaterThanOrEqual(4);
    await source.close();
    await waitFor(() => started.every((pid) => !isProcessRunning(pid)), "the started processes to end");
    const after = await source.expand("mcp:fixture/*").catch((error: unknown) => error);
    expect(AgentdError.is(after, "MCP_UNAVAILABLE")).toBe(true);
  });

  it("ends a stopped run's wait for a server's start, and goes on starting it for another run that waits", async () => {
    // Slow to start (it reads nothing for a while), so the first run stops during the start.
    const { source } = harness(configWith({ fixture: fixtureServer(["--start-after", "1500"]) }));
    const first = new AbortController();
    const firstWait = source.expand("mcp:fixture/*", first.signal).catch((error: unknown) => error);
    const secondWait = source.expand("mcp:fixture/*", new AbortController().signal);
    await waitFor(async () => (await runningFixtureServers()).length > 0, "the server to start");

    first.abort(new Error("the first run was stopped"));

    expect(await firstWait).toEqual(new Error("the first run was stopped"));
    expect((await secondWait).map((tool) => tool.name)).toContain("mcp:fixture/echo");
  });

  it("cancels a server's start once no run waits for it: a server that never answers is ended", async () => {
    const silent = { command: process.execPath, args: ["-e", "setInterval(() => {}, 1000)"] };
    const { source } = harness(configWith({ silent }));
    const run = new AbortController();
    const waiting = source.expand("mcp:silent/*", run.signal).catch((error: unknown) => error);
    const silentServer = async () => {
      for (const pid of await descendants()) {
        const commandLine = await readFile(`/proc/${pid}/cmdline`, "utf8").catch(() => "");
        if (commandLine.startsWith(process.execPath) && commandLine.includes("setInterval")) return pid;
      }
      return undefined;
    };
    const server = await waitFor(silentServer, "the silent server to start");

    run.abort(new Error("the run was stopped"));

    expect(await waiting).toEqual(new Error("the run was stopped"));
    await waitFor(() => !isProcessRunning(server), "the abandoned start to end");
  });

  it("close() cancels a start in progress: a server that never answers is ended, not waited for", async () => {
    // Longer than the test's own limit: only a cancelled start lets the test finish.
    const silent = { command: process.execPath, args: ["-e", "setInterval(() => {}, 1000)"] };
    const { source } = harness(configWith({ silent }));
    const listing = source.expand("mcp:silent/*").catch((error: unknown) => error);
    await waitFor(async () => (await descendants()).length > 0, "the silent server to start");
    const started = await descendants();

    await source.close();

    expect(AgentdError.is(await listing, "MCP_UNAVAILABLE")).toBe(true);
    await waitFor(() => started.every((pid) => !isProcessRunning(pid)), "the silent server to end");
  });
});
