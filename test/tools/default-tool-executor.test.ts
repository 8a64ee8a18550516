import { tmpdir } from "node:os";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import type { ApprovalAnswer, ApprovalGate, ApprovalRequest } from "../../src/approvals/approval-gate.js";
import { ConfigSchema } from "../../src/config/config-schema.js";
import type { AgentEvent } from "../../src/events/agent-event.js";
import { EventBus } from "../../src/events/event-bus.js";
import { createLogger } from "../../src/logging/logger.js";
import { RunAbort, RunControl } from "../../src/run-vocabulary/run-control.js";
import { SecretRedactor } from "../../src/secrets/secret-redactor.js";
import { DefaultToolExecutor } from "../../src/tools/default-tool-executor.js";
import { CompositeToolCatalog } from "../../src/tools/tool-catalog.js";
import { type ToolContext, type ToolOutput, defineTool } from "../../src/tools/tool-definition.js";
import type { ToolResult } from "../../src/tools/tool-executor.js";
import type { Vault } from "../../src/vault/vault.js";
import { makeDefinition } from "../support/make-definition.js";
import { testSandboxHost } from "../support/test-sandbox.js";

const TOKEN = "tok-3f9a7c1e-live";
/** A value whose JSON form differs from it: quotes, a backslash and a newline. */
const QUOTED = 'pa"ss\\wo\nrd-5e2b';

/** A vault in memory that remembers which names were read. */
class RecordingVault implements Vault {
  readonly backend = "memory";
  readonly reads: string[] = [];
  readonly #values = new Map<string, string>();
  constructor(values: Record<string, string>) {
    for (const [name, value] of Object.entries(values)) this.#values.set(name, value);
  }
  async get(name: string): Promise<string | undefined> {
    this.reads.push(name);
    return this.#values.get(name);
  }
  async set(name: string, value: string): Promise<void> {
    this.#values.set(name, value);
  }
  async remove(name: string): Promise<boolean> {
    return this.#values.delete(name);
  }
  async list(): Promise<string[]> {
    return [...this.#values.keys()].sort();
  }
}

/** An approval gate that answers every request with `answer` and records what it was asked. */
class ScriptedGate implements ApprovalGate {
  readonly requests: ApprovalRequest[] = [];
  /** Runs just before the answer is given (a stop racing the human's answer). */
  beforeAnswer: (() => void) | undefined;
  constructor(readonly answer: ApprovalAnswer | "wait-for-stop") {}
  async request(request: ApprovalRequest): Promise<ApprovalAnswer> {
    this.requests.push(request);
    this.beforeAnswer?.();
    if (this.answer !== "wait-for-stop") return this.answer;
    return new Promise((_resolve, reject) =>
      request.signal.addEventListener("abort", () => reject(request.signal.reason as Error)),
    );
  }
}

/** A tool that records every call and answers with `respond(value)`. */
function recordingTool(
  name: string,
  respond: (value: { text: string }, context: ToolContext) => Promise<ToolOutput> | ToolOutput,
) {
  const calls: Array<{ text: string }> = [];
  const tool = defineTool({
    name,
    description: `${name} for tests`,
    schema: z.strictObject({ text: z.string() }),
    subject: (value) => ({ kind: "texts", texts: [value.text] }),
    run: async (value, context) => {
      calls.push(value);
      return respond(value, context);
    },
  });
  return { tool, calls };
}

interface HarnessOptions {
  frontmatter?: Record<string, unknown>;
  gate?: ScriptedGate;
  respond?: (value: { text: string }, context: ToolContext) => Promise<ToolOutput> | ToolOutput;
  maxOutputBytes?: number;
}

function harness(options: HarnessOptions = {}) {
  const echo = recordingTool("echo", options.respond ?? ((value) => ({ ok: true, output: value.text })));
  const other = recordingTool("other", () => ({ ok: true, output: "other ran" }));
  const vault = new RecordingVault({ token: TOKEN, quoted: QUOTED, unused: "unused-secret-value" });
  const redactor = new SecretRedactor();
  const gate = options.gate ?? new ScriptedGate({ approved: false, state: "denied", scope: "once" });
  const bus = new EventBus({ redact: redactor.redactEvent });
  const events: AgentEvent[] = [];
  bus.subscribe((event) => events.push(event));
  const settings = ConfigSchema.parse({ tools: { max_output_bytes: options.maxOutputBytes ?? 4096 } }).tools;
  const executor = new DefaultToolExecutor({
    catalog: new CompositeToolCatalog([echo.tool, other.tool]),
    approvals: gate,
    vault,
    redactor,
    settings,
    sandbox: testSandboxHost(tmpdir()),
    logger: createLogger({ level: "silent", pretty: false }),
    abandonAfterMilliseconds: 300,
  });
  const definition = makeDefinition({
    id: "exec-agent",
    frontmatter: {
      tools: ["echo"],
      secrets: ["token", "quoted"],
      permissions: { allow: ["echo"] },
      ...options.frontmatter,
    },
  });
  const control = new RunControl();
  let callNumber = 0;
  const statuses: string[] = [];
  const execute = (tool: string, argumentsJson: string): Promise<ToolResult> =>
    executor.execute(
      { callId: `call_${++callNumber}`, tool, argumentsJson },
      {
        runId: "r_test",
        definition,
        control,
        events: bus,
        setStatus: (status) => void statuses.push(status),
      },
    );
  return { executor, execute, definition, control, vault, gate, events, statuses, echo, other };
}

const args = (text: string) => JSON.stringify({ text });

describe("DefaultToolExecutor refusals", () => {
  it("refuses a tool the agent does not list, without running it", async () => {
    const { execute, other } = harness();
    const result = await execute("other", args("hi"));
    expect(result).toMatchObject({ ok: false, code: "TOOL_NOT_FOUND" });
    expect(result.output).toContain('tool "other" is not available to this agent');
    expect(other.calls).toEqual([]);
  });

  it("refuses arguments that are not JSON or do not fit the schema, without running the tool", async () => {
    const { execute, echo } = harness();
    const broken = await execute("echo", '{"text": "unclosed');
    expect(broken).toMatchObject({ ok: false, code: "TOOL_BAD_ARGUMENTS" });
    expect(broken.output).toContain("not valid JSON");
    const invalid = await execute("echo", JSON.stringify({ text: 42 }));
    expect(invalid).toMatchObject({ ok: false, code: "TOOL_BAD_ARGUMENTS" });
    expect(invalid.output).toMatch(/invalid arguments for echo: text: .*string/);
    const extra = await execute("echo", JSON.stringify({ text: "x", surprise: true }));
    expect(extra).toMatchObject({ ok: false, code: "TOOL_BAD_ARGUMENTS" });
    expect(echo.calls).toEqual([]);
  });

  it("refuses a secret the agent does not list, naming it, before any vault read or approval", async () => {
    const gate = new ScriptedGate({ approved: true, state: "approved", scope: "once" });
    const { execute, echo, vault } = harness({ gate, frontmatter: { permissions: { ask: ["echo"] } } });
    const result = await execute("echo", args("{{secret:unused}} and {{secret:token}}"));
    expect(result).toMatchObject({ ok: false, code: "SECRET_NOT_ALLOWED" });
    expect(result.output).toContain('agent "exec-agent" may not use secret "unused"');
    expect(result.output).not.toContain('"token"');
    expect(echo.calls).toEqual([]);
    expect(vault.reads).toEqual([]);
    expect(gate.requests).toEqual([]);
  });

  it("refuses a listed secret the vault does not hold; the template never reaches the tool", async () => {
    const { execute, echo } = harness({ frontmatter: { secrets: ["token", "absent"] } });
    const result = await execute("echo", args("key={{secret:absent}}"));
    expect(result).toMatchObject({ ok: false, code: "SECRET_NOT_FOUND" });
    expect(result.output).toContain('secret "absent" is not in the memory vault');
    expect(result.output).toContain("agentd secrets set absent");
    expect(echo.calls).toEqual([]);
  });

  it("refuses a denied call without running it or asking anyone", async () => {
    const gate = new ScriptedGate({ approved: true, state: "approved", scope: "once" });
    const { execute, echo } = harness({
      gate,
      frontmatter: { permissions: { allow: ["echo"], deny: ["echo(rm *)"] } },
    });
    const result = await execute("echo", args("rm everything"));
    expect(result).toMatchObject({ ok: false, code: "TOOL_DENIED" });
    expect(result.output).toContain("denied by");
    expect(echo.calls).toEqual([]);
    expect(gate.requests).toEqual([]);
    expect((await execute("echo", args("ls"))).ok).toBe(true);
  });

  it("asks for an `ask` call with the template in place, and does not run it when denied", async () => {
    const { execute, echo, gate, statuses, vault } = harness({
      frontmatter: { permissions: { ask: ["echo"] } },
    });
    const result = await execute("echo", args("use {{secret:token}}"));
    expect(result).toMatchObject({ ok: false, code: "TOOL_DENIED" });
    expect(result.output).toContain("a human denied it");
    expect(gate.requests.map((request) => request.arguments)).toEqual([{ text: "use {{secret:token}}" }]);
    expect(statuses).toEqual(["waiting", "running"]);
    expect(echo.calls).toEqual([]);
    expect(vault.reads).toEqual([]);
  });

  it("runs an approved `ask` call; approved for the run, it is not asked again", async () => {
    const gate = new ScriptedGate({ approved: true, state: "approved", scope: "run" });
    const { execute, echo } = harness({ gate, frontmatter: { permissions: { ask: ["echo"] } } });
    expect(await execute("echo", args("first"))).toMatchObject({ ok: true, output: "first" });
    expect(await execute("echo", args("second"))).toMatchObject({ ok: true, output: "second" });
    expect(gate.requests).toHaveLength(1);
    expect(echo.calls).toEqual([{ text: "first" }, { text: "second" }]);
  });
});

describe("DefaultToolExecutor execution", () => {
  it("runs an allowed call with the secret substituted and masks it in the output, in every form", async () => {
    const { execute, echo } = harness({
      respond: (value) => ({
        ok: true,
        output: [
          `plain ${value.text}`,
          `json ${JSON.stringify({ quoted: `"${value.text}"` })}`,
          `base64 ${Buffer.from(value.text).toString("base64")}`,
        ].join("\n"),
      }),
    });
    const result = await execute("echo", args("{{secret:token}}"));
    expect(echo.calls).toEqual([{ text: TOKEN }]);
    expect(result.ok).toBe(true);
    expect(result.output).toBe(
      'plain [secret:token]\njson {"quoted":"\\"[secret:token]\\""}\nbase64 [secret:token]',
    );
    expect(result.output).not.toContain(TOKEN);
  });

  it("masks a value with quotes, backslashes and newlines as it appears inside JSON output", async () => {
    const { execute, echo } = harness({
      respond: (value) => ({
        ok: true,
        output: JSON.stringify({ password: value.text, again: [value.text] }),
      }),
    });
    const result = await execute("echo", args("{{secret:quoted}}"));
    expect(echo.calls).toEqual([{ text: QUOTED }]);
    expect(result.output).toBe('{"password":"[secret:quoted]","again":["[secret:quoted]"]}');
  });

  it("caps output over max_output_bytes with a note", async () => {
    const { execute } = harness({
      maxOutputBytes: 100,
      respond: () => ({ ok: true, output: "x".repeat(500) }),
    });
    const result = await execute("echo", args("big"));
    expect(result.truncated).toBe(true);
    expect(result.output.startsWith("x".repeat(100))).toBe(true);
    expect(result.output).not.toContain("x".repeat(101));
    expect(result.output).toContain("[output truncated: showing the first 100 of 500 bytes");
  });

  it("publishes action then observation per call, with the arguments masked", async () => {
    const { execute, events } = harness();
    await execute("echo", args("say {{secret:token}}"));
    await execute("other", args("nope"));
    expect(events.map((event) => [event.id, event.type])).toEqual([
      [1, "action"],
      [2, "observation"],
      [3, "action"],
      [4, "observation"],
    ]);
    const [action, observation, , refused] = events;
    expect(action).toMatchObject({
      agent: "exec-agent",
      run: "r_test",
      data: { call_id: "call_1", tool: "echo", arguments: { text: "say {{secret:token}}" } },
    });
    expect(observation?.data).toMatchObject({ call_id: "call_1", ok: true, output: "say [secret:token]" });
    expect(refused?.data).toMatchObject({ call_id: "call_2", ok: false, tool: "other" });
    expect(JSON.stringify(events)).not.toContain(TOKEN);
  });

  it("masks a known value the model wrote out in its arguments, in the action event", async () => {
    const { execute, events } = harness();
    await execute("echo", args("{{secret:token}}"));
    await execute("echo", args(`literal ${TOKEN}`));
    const actions = events.filter((event) => event.type === "action").map((event) => event.data);
    expect(actions[1]).toMatchObject({ arguments: { text: "literal [secret:token]" } });
    expect(JSON.stringify(events)).not.toContain(TOKEN);
  });

  it("turns a thrown tool error into ok:false TOOL_FAILED, masked", async () => {
    const { execute } = harness({
      respond: (value) => {
        throw new Error(`connection refused with key ${value.text}`);
      },
    });
    const result = await execute("echo", args("{{secret:token}}"));
    expect(result).toMatchObject({ ok: false, code: "TOOL_FAILED" });
    expect(result.output).toContain("connection refused with key [secret:token]");
  });

  it("rethrows the stop reason when the run is stopped while the tool runs", async () => {
    let started!: () => void;
    const running = new Promise<void>((resolve) => (started = resolve));
    const { execute, control, events } = harness({
      respond: (_value, context) =>
        new Promise((_resolve, reject) => {
          context.signal.addEventListener("abort", () => reject(new Error("aborted by signal")));
          started();
        }),
    });
    const outcome = execute("echo", args("long job"));
    await running;
    control.stop("user_stop", "stopped by the user");
    const error = await outcome.then(
      () => undefined,
      (caught: unknown) => caught,
    );
    expect(error).toBeInstanceOf(RunAbort);
    expect((error as RunAbort).reason).toBe("user_stop");
    expect(events.map((event) => event.type)).toEqual(["action"]);
  });

  it("ends a stopped call whose tool ignores the signal, after a short grace", async () => {
    let started!: () => void;
    const running = new Promise<void>((resolve) => (started = resolve));
    const { execute, control } = harness({
      respond: () =>
        new Promise<ToolOutput>(() => {
          // Blocked for good, deaf to the signal (a write into a FIFO nobody reads).
          started();
        }),
    });
    const outcome = execute("echo", args("stuck"));
    await running;
    control.stop("user_stop", "stopped by the user");
    await expect(outcome).rejects.toMatchObject({ reason: "user_stop" });
  });

  it("does not run a call whose approval arrives after the run was stopped", async () => {
    const gate = new ScriptedGate({ approved: true, state: "approved", scope: "once" });
    const { execute, control, echo } = harness({ gate, frontmatter: { permissions: { ask: ["echo"] } } });
    gate.beforeAnswer = () => control.stop("user_stop", "stopped while a human was approving");
    await expect(execute("echo", args("too late"))).rejects.toMatchObject({ reason: "user_stop" });
    expect(echo.calls).toEqual([]);
  });

  it("rethrows the stop reason when the run is stopped while waiting for approval", async () => {
    const gate = new ScriptedGate("wait-for-stop");
    const { execute, control, echo } = harness({ gate, frontmatter: { permissions: { ask: ["echo"] } } });
    const outcome = execute("echo", args("later"));
    await expect.poll(() => gate.requests.length).toBe(1);
    control.stop("timeout", "the run passed its timeout");
    await expect(outcome).rejects.toMatchObject({ reason: "timeout" });
    expect(echo.calls).toEqual([]);
  });
});
