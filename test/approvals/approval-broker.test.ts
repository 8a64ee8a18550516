import { describe, expect, it } from "vitest";
import { ApprovalBroker } from "../../src/approvals/approval-broker.js";
import type { ApprovalPolicy } from "../../src/config/config-schema.js";
import { AgentdError } from "../../src/errors/agentd-error.js";
import type { AgentEvent, EventOf } from "../../src/events/agent-event.js";
import { EventBus } from "../../src/events/event-bus.js";
import { RunAbort, RunControl } from "../../src/run-vocabulary/run-control.js";
import { ManualClock } from "../support/manual-clock.js";

const TEN_MINUTES = 600_000;
const START = Date.UTC(2026, 0, 5, 9);

function harness(policy: ApprovalPolicy = { timeout: TEN_MINUTES, on_timeout: "deny" }) {
  let counter = 0;
  // Expiry is the clock's: each test moves it by hand instead of waiting for a timeout.
  const clock = new ManualClock(START);
  const broker = new ApprovalBroker({ createId: () => `a_test${++counter}`, clock });
  const bus = new EventBus();
  const events: AgentEvent[] = [];
  bus.subscribe((event) => events.push(event));
  const control = new RunControl();
  const ask = (tool = "write_file", args: unknown = { path: "notes.md", content: "{{secret:token}}" }) =>
    broker.request({
      agent: "writer",
      run: "r_1",
      tool,
      arguments: args,
      reason: `${tool} matches ask rule "${tool}"`,
      policy,
      signal: control.signal,
      events: bus,
    });
  const approvalEvents = () =>
    events
      .filter((event): event is EventOf<"approval"> => event.type === "approval")
      .map((event) => event.data);
  return { broker, ask, control, approvalEvents, clock };
}

describe("ApprovalBroker", () => {
  it("lists a request until it is approved, then answers it with the scope", async () => {
    const { broker, ask, approvalEvents } = harness();
    const answer = ask();
    const [pending] = broker.list();
    expect(broker.list()).toHaveLength(1);
    expect(pending).toMatchObject({
      id: "a_test1",
      agent: "writer",
      run: "r_1",
      tool: "write_file",
      arguments: { path: "notes.md", content: "{{secret:token}}" },
    });
    expect(pending?.requested_at).toBe(new Date(START).toISOString());
    expect(pending?.expires_at).toBe(new Date(START + TEN_MINUTES).toISOString());

    broker.decide("a_test1", "approve", { scope: "run" });
    await expect(answer).resolves.toEqual({ approved: true, state: "approved", scope: "run" });
    expect(broker.list()).toEqual([]);
    expect(approvalEvents()).toEqual([
      {
        id: "a_test1",
        state: "requested",
        tool: "write_file",
        arguments: { path: "notes.md", content: "{{secret:token}}" },
        expires_at: pending?.expires_at,
        // The rule that asked, for the page that shows the call beside its buttons.
        reason: 'write_file matches ask rule "write_file"',
      },
      { id: "a_test1", state: "approved", tool: "write_file", scope: "run", by: "api" },
    ]);
  });

  it("answers a denial, and names who denied", async () => {
    const { broker, ask, approvalEvents } = harness();
    const answer = ask();
    broker.decide("a_test1", "deny", { by: "tty" });
    await expect(answer).resolves.toEqual({ approved: false, state: "denied", scope: "once" });
    expect(approvalEvents().map((event) => [event.state, event.by])).toEqual([
      ["requested", undefined],
      ["denied", "tty"],
    ]);
  });

  it("keeps requests apart: answering one leaves the other pending", async () => {
    const { broker, ask } = harness();
    const first = ask("write_file");
    const second = ask("shell", { command: "rm -rf build" });
    expect(broker.list().map((approval) => [approval.id, approval.tool])).toEqual([
      ["a_test1", "write_file"],
      ["a_test2", "shell"],
    ]);
    broker.decide("a_test2", "deny");
    await expect(second).resolves.toMatchObject({ approved: false });
    expect(broker.list().map((approval) => approval.id)).toEqual(["a_test1"]);
    broker.decide("a_test1", "approve");
    await expect(first).resolves.toMatchObject({ approved: true, scope: "once" });
  });

  it("refuses an unknown or already answered id with APPROVAL_NOT_FOUND", async () => {
    const { broker, ask } = harness();
    expect(() => broker.decide("a_nope", "approve")).toThrow(AgentdError);
    expect(() => broker.decide("a_nope", "approve")).toThrow(/no pending approval "a_nope"/);
    const answer = ask();
    broker.decide("a_test1", "approve");
    await answer;
    let thrown: unknown;
    try {
      broker.decide("a_test1", "deny");
    } catch (error) {
      thrown = error;
    }
    expect(AgentdError.is(thrown, "APPROVAL_NOT_FOUND")).toBe(true);
  });

  it("expires with on_timeout deny: answer expired, not approved, nothing left pending", async () => {
    const { broker, ask, approvalEvents, clock } = harness({ timeout: 200, on_timeout: "deny" });
    const answer = ask();
    clock.advanceBy(199);
    expect(broker.list()).toHaveLength(1);
    clock.advanceBy(1);
    await expect(answer).resolves.toEqual({ approved: false, state: "expired", scope: "once" });
    expect(broker.list()).toEqual([]);
    expect(approvalEvents().map((event) => [event.state, event.by])).toEqual([
      ["requested", undefined],
      ["expired", "timeout"],
    ]);
    expect(() => broker.decide("a_test1", "approve")).toThrow(/no pending approval/);
  });

  it("expires with on_timeout approve: the call is approved once, by the timeout", async () => {
    const { broker, ask, approvalEvents, clock } = harness({ timeout: 200, on_timeout: "approve" });
    const answer = ask();
    clock.advanceBy(200);
    await expect(answer).resolves.toEqual({ approved: true, state: "approved", scope: "once" });
    expect(broker.list()).toEqual([]);
    expect(approvalEvents().map((event) => [event.state, event.by])).toEqual([
      ["requested", undefined],
      ["approved", "timeout"],
    ]);
  });

  it("does not expire a request that was answered first", async () => {
    const { broker, ask, approvalEvents, clock } = harness({ timeout: 200, on_timeout: "approve" });
    const answer = ask();
    broker.decide("a_test1", "deny");
    await expect(answer).resolves.toMatchObject({ approved: false, state: "denied" });
    // The answered request's timer is gone; a later request expires by its own.
    expect(clock.pending).toBe(0);
    const later = ask("shell");
    clock.advanceBy(200);
    await expect(later).resolves.toMatchObject({ approved: true, state: "approved" });
    expect(approvalEvents().map((event) => [event.id, event.state])).toEqual([
      ["a_test1", "requested"],
      ["a_test1", "denied"],
      ["a_test2", "requested"],
      ["a_test2", "approved"],
    ]);
  });

  it("rejects at once with the run's reason when the run is stopped while waiting", async () => {
    const { broker, ask, control, approvalEvents } = harness();
    const answer = ask();
    control.stop("user_stop", "stopped by the user");
    const reason = await answer.then(
      () => undefined,
      (error: unknown) => error,
    );
    expect(reason).toBeInstanceOf(RunAbort);
    expect((reason as RunAbort).reason).toBe("user_stop");
    expect(broker.list()).toEqual([]);
    expect(approvalEvents().map((event) => [event.state, event.by])).toEqual([
      ["requested", undefined],
      ["denied", "stop"],
    ]);
    expect(() => broker.decide("a_test1", "approve")).toThrow(/no pending approval/);
  });

  it("refuses a request of a run already stopped, without listing it", async () => {
    const { broker, ask, control, approvalEvents } = harness();
    control.stop("timeout", "the run passed its timeout");
    await expect(ask()).rejects.toBeInstanceOf(RunAbort);
    expect(broker.list()).toEqual([]);
    expect(approvalEvents()).toEqual([]);
  });

  it("tells listeners of each request, with the reason, and masks arguments and reason", async () => {
    const broker = new ApprovalBroker({
      redact: (value) =>
        JSON.parse(JSON.stringify(value).replaceAll("hunter22", "[secret:pw]")) as typeof value,
    });
    const heard: string[] = [];
    const stopListening = broker.onRequested((approval) => {
      heard.push(`${approval.tool}: ${approval.reason}`);
      broker.decide(approval.id, "approve", { by: "tty" });
    });
    const control = new RunControl();
    const request = {
      agent: "writer",
      run: "r_2",
      tool: "shell",
      arguments: { command: "login hunter22" },
      reason: 'shell matches ask rule "shell"',
      policy: { timeout: TEN_MINUTES, on_timeout: "deny" as const },
      signal: control.signal,
      events: new EventBus(),
    };
    await expect(broker.request(request)).resolves.toMatchObject({ approved: true });
    expect(heard).toEqual(['shell: shell matches ask rule "shell"']);
    stopListening();
    const waiting = broker.request(request);
    expect(broker.list()[0]?.id).toMatch(/^a_[0-9a-f]{10}$/);
    expect(broker.list()[0]?.arguments).toEqual({ command: "login [secret:pw]" });
    expect(heard).toHaveLength(1);
    // The reason quotes the agent file's rule, which may hold a vault value too.
    broker.onRequested((approval) => heard.push(String(approval.reason)));
    const quoting = broker.request({ ...request, reason: 'shell matches ask rule "login hunter22"' });
    expect(heard.at(-1)).toBe('shell matches ask rule "login [secret:pw]"');
    expect(broker.list()[1]?.reason).toBe('shell matches ask rule "login [secret:pw]"');
    control.stop("user_stop", "done");
    await expect(waiting).rejects.toBeInstanceOf(RunAbort);
    await expect(quoting).rejects.toBeInstanceOf(RunAbort);
  });
});
