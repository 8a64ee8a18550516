import { describe, expect, it } from "vitest";
import type { AgentDefinition } from "../../../src/definitions/agent-definition.js";
import type { RunLife } from "../../../src/runs/run-life.js";
import { queuedRecord } from "../../../src/runs/record/new-run-record.js";
import type { RunRecord } from "../../../src/run-vocabulary/run-record.js";
import { SecretRedactor } from "../../../src/secrets/secret-redactor.js";

/** A vault value that is also a valid W3C trace id (32 lowercase hex digits), as many API keys are. */
const HEX_SECRET = "4bf92f3577b34da6a3ce929d0e0e4736";

/** The parts of a RunLife that queuedRecord reads; the trace stamp takes the caller's trace id. */
function lifeWith(redactor: SecretRedactor, callerTraceId: string): RunLife {
  return {
    now: () => new Date("2026-01-01T00:00:00Z"),
    createRunId: () => "r_0000000000000000000001",
    redact: (record: RunRecord) => redactor.redactValue(record),
    options: {
      traceNewRun: (record: RunRecord) => ({
        ...record,
        trace_id: callerTraceId,
        span_id: "00f067aa0ba902b7",
      }),
    },
  } as unknown as RunLife;
}

describe("a new run's first record", () => {
  it("masks a vault value that came in as the caller's trace id (traceparent), as later records do", () => {
    const redactor = new SecretRedactor();
    redactor.add("deploy_key", HEX_SECRET);
    const record = queuedRecord(lifeWith(redactor, HEX_SECRET), {
      agent: "alpha",
      task: "hello",
      trigger: { kind: "api" },
      definition: { hash: "hash" } as AgentDefinition,
    });
    expect(JSON.stringify(record)).not.toContain(HEX_SECRET);
    // What the next record of the run (its launch) makes of the same fields.
    expect(record.trace_id).toBe(redactor.redactValue({ ...record, trace_id: HEX_SECRET }).trace_id);
  });
});
