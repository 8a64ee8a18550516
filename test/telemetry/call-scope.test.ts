import { ROOT_CONTEXT, trace } from "@opentelemetry/api";
import { describe, expect, it } from "vitest";
import { type TraceScope, openCallScope, scopeOfSignal } from "../../src/telemetry/trace-scope.js";

const scope = (runId: string): TraceScope => ({
  tracer: trace.getTracer("test"),
  context: ROOT_CONTEXT,
  runId,
});

describe("a tool call's scope", () => {
  it("is found by the call's own signal, aborted with its run's reason while open, not once closed", () => {
    const run = new AbortController();
    const other = new AbortController();
    const open = openCallScope(run.signal, scope("r_1"));
    const closed = openCallScope(run.signal, scope("r_1"));
    const elsewhere = openCallScope(other.signal, scope("r_2"));
    expect(scopeOfSignal(open.signal)?.runId).toBe("r_1");
    expect(scopeOfSignal(elsewhere.signal)?.runId).toBe("r_2");
    closed.close();
    const reason = new Error("stopped");
    run.abort(reason);
    expect(open.signal.aborted).toBe(true);
    expect(open.signal.reason).toBe(reason);
    expect(closed.signal.aborted).toBe(false);
    expect(elsewhere.signal.aborted).toBe(false);
    const late = openCallScope(run.signal, scope("r_1"));
    expect(late.signal.reason).toBe(reason);
  });
});
