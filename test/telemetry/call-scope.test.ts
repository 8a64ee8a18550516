import { ROOT_CONTEXT, trace } from "@opentelemetry/api";
import { describe, expect, it } from "vitest";
import {
  type TraceScope,
  openCallScope,
  scopeOfSignal,
  setRunScope,
} from "../../src/telemetry/trace-scope.js";

const scope = (runId: string): TraceScope => ({
  tracer: trace.getTracer("test"),
  context: ROOT_CONTEXT,
  runId,
});

describe("a tool call's scope", () => {
  it("is found by its run's signal while it is the only call in flight, and the run's once closed", () => {
    const run = new AbortController();
    const runScope = scope("r_1");
    setRunScope(run.signal, runScope);
    const call = scope("r_1");
    const alone = openCallScope(run.signal, call);
    expect(alone.signal).toBe(run.signal);
    expect(scopeOfSignal(run.signal)).toBe(call);
    alone.close();
    expect(scopeOfSignal(run.signal)).toBe(runScope);
    const next = scope("r_1");
    const again = openCallScope(run.signal, next);
    expect(scopeOfSignal(again.signal)).toBe(next);
    again.close();
    expect(scopeOfSignal(run.signal)).toBe(runScope);
  });

  it("side by side, gets a signal of its own, aborted with its run's reason while open, not once closed", () => {
    const run = new AbortController();
    const other = new AbortController();
    const first = scope("r_1");
    const second = scope("r_1");
    const third = scope("r_1");
    const alone = openCallScope(run.signal, first);
    const open = openCallScope(run.signal, second);
    const closed = openCallScope(run.signal, third);
    const elsewhere = openCallScope(other.signal, scope("r_2"));
    expect(open.signal).not.toBe(run.signal);
    expect(closed.signal).not.toBe(open.signal);
    expect(scopeOfSignal(alone.signal)).toBe(first);
    expect(scopeOfSignal(open.signal)).toBe(second);
    expect(scopeOfSignal(closed.signal)).toBe(third);
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
