import { tmpdir } from "node:os";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { ApprovalBroker } from "../../src/approvals/approval-broker.js";
import { ConfigSchema } from "../../src/config/config-schema.js";
import type { AgentEvent } from "../../src/events/agent-event.js";
import { EventBus } from "../../src/events/event-bus.js";
import { createLogger } from "../../src/logging/logger.js";
import { RunControl } from "../../src/run-vocabulary/run-control.js";
import { SecretRedactor } from "../../src/secrets/secret-redactor.js";
import { DefaultToolExecutor } from "../../src/tools/default-tool-executor.js";
import { CompositeToolCatalog } from "../../src/tools/tool-catalog.js";
import { defineTool } from "../../src/tools/tool-definition.js";
import type { Vault } from "../../src/vault/vault.js";
import { makeDefinition } from "../support/make-definition.js";
import { testSandboxHost } from "../support/test-sandbox.js";

const emptyVault: Vault = {
  backend: "memory",
  get: async () => undefined,
  set: async () => undefined,
  remove: async () => false,
  list: async () => [],
};

/** An executor with one `note` tool under `ask`, wired to a real broker, as the daemon wires it. */
function harness() {
  const notes: string[] = [];
  const note = defineTool({
    name: "note",
    description: "writes a note",
    schema: z.strictObject({ text: z.string() }),
    subject: (value) => ({ kind: "texts", texts: [value.text] }),
    run: async (value) => {
      notes.push(value.text);
      return { ok: true, output: `noted ${value.text}` };
    },
  });
  const broker = new ApprovalBroker();
  const bus = new EventBus();
  const events: AgentEvent[] = [];
  bus.subscribe((event) => events.push(event));
  const executor = new DefaultToolExecutor({
    catalog: new CompositeToolCatalog([note]),
    approvals: broker,
    vault: emptyVault,
    redactor: new SecretRedactor(),
    settings: ConfigSchema.parse({}).tools,
    sandbox: testSandboxHost(tmpdir()),
    logger: createLogger({ level: "silent", pretty: false }),
  });
  const definition = makeDefinition({
    id: "noter",
    frontmatter: { tools: ["note"], permissions: { ask: ["note"] } },
  });
  const statuses: string[] = [];
  let callNumber = 0;
  const control = new RunControl();
  const execute = (text: string) =>
    executor.execute(
      { callId: `call_${++callNumber}`, tool: "note", argumentsJson: JSON.stringify({ text }) },
      {
        runId: "r_exec",
        definition,
        control,
        events: bus,
        setStatus: (status) => void statuses.push(status),
      },
    );
  /** Polls the broker until a request is pending (the executor reaches it asynchronously). */
  const nextPending = async () => {
    const deadline = Date.now() + 10_000;
    while (broker.list().length === 0) {
      if (Date.now() > deadline) throw new Error("no approval was requested");
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
    const [pending] = broker.list();
    if (!pending) throw new Error("no approval was requested");
    return pending;
  };
  return { broker, execute, nextPending, notes, statuses, events, control };
}

describe("ask calls through the tool executor and the broker", () => {
  it("leaves the wait for the answer out of the tool's duration", async () => {
    const { broker, execute, nextPending, events } = harness();
    const result = execute("timed");
    const pending = await nextPending();
    const askedAt = performance.now();
    // The answer comes after a wait far longer than the tool itself takes.
    await new Promise((resolve) => setTimeout(resolve, 400));
    broker.decide(pending.id, "approve");
    await result;
    const waited = performance.now() - askedAt;
    const observation = events.find((event) => event.type === "observation");
    expect(observation?.type === "observation" && observation.data.duration_ms).toBeLessThan(waited);
  });

  it("parks the run in waiting until approved, then runs the tool", async () => {
    const { broker, execute, nextPending, notes, statuses } = harness();
    const result = execute("first");
    const pending = await nextPending();
    expect(pending).toMatchObject({
      agent: "noter",
      run: "r_exec",
      tool: "note",
      arguments: { text: "first" },
    });
    expect(statuses).toEqual(["waiting"]);
    expect(notes).toEqual([]);
    broker.decide(pending.id, "approve");
    await expect(result).resolves.toMatchObject({ ok: true, output: "noted first" });
    expect(statuses).toEqual(["waiting", "running"]);
    expect(notes).toEqual(["first"]);
  });

  it("does not run a denied call: the model reads TOOL_DENIED", async () => {
    const { broker, execute, nextPending, notes, events } = harness();
    const result = execute("secret plan");
    broker.decide((await nextPending()).id, "deny");
    const denied = await result;
    expect(denied).toMatchObject({ ok: false, code: "TOOL_DENIED" });
    expect(denied.output).toContain("a human denied it");
    expect(notes).toEqual([]);
    expect(
      events.map((event) => (event.type === "approval" ? `approval ${event.data.state}` : event.type)),
    ).toEqual(["action", "approval requested", "approval denied", "observation"]);
  });

  it("asks once for a tool approved for the rest of the run", async () => {
    const { broker, execute, nextPending, notes, events } = harness();
    const first = execute("one");
    broker.decide((await nextPending()).id, "approve", { scope: "run" });
    await expect(first).resolves.toMatchObject({ ok: true });
    await expect(execute("two")).resolves.toMatchObject({ ok: true, output: "noted two" });
    expect(notes).toEqual(["one", "two"]);
    expect(events.filter((event) => event.type === "approval")).toHaveLength(2);
  });

  it("asks again after an approval for this call only", async () => {
    const { broker, execute, nextPending, notes } = harness();
    const first = execute("one");
    broker.decide((await nextPending()).id, "approve");
    await first;
    const second = execute("two");
    broker.decide((await nextPending()).id, "approve");
    await second;
    expect(notes).toEqual(["one", "two"]);
  });

  it("ends the call with the run's stop while waiting, without running the tool", async () => {
    const { broker, execute, nextPending, notes, control } = harness();
    const result = execute("never");
    await nextPending();
    control.stop("user_stop", "stopped by the user");
    await expect(result).rejects.toMatchObject({ reason: "user_stop" });
    expect(broker.list()).toEqual([]);
    expect(notes).toEqual([]);
  });
});
