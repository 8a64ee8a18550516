import { describe, expect, it } from "vitest";
import { createApiMetrics } from "../../src/api/api-metrics.js";
import { EventBus } from "../../src/events/event-bus.js";
import { httpErrorReply, textReply } from "../support/scripted-llm-server.js";
import { testClient } from "../llm/client-settings.js";
import { withScriptedLlmServer } from "../support/with-scripted-llm-server.js";

const server = withScriptedLlmServer();

const noRuns = { get: () => undefined, unfinished: () => [], queueDepth: () => 0 } as never;

describe("LLM metrics", () => {
  it("count calls by model and outcome, time them, count retries and show the breaker state", async () => {
    const client = testClient(server.url);
    const metrics = createApiMetrics({ bus: new EventBus(), runs: noRuns, llm: client.telemetry });
    server.enqueue(httpErrorReply(503), textReply("fine"));
    await client.complete(
      { model: "scripted", messages: [{ role: "user", content: "hi" }] },
      { signal: new AbortController().signal },
    );
    const text = await metrics.registry.metrics();
    metrics.close();
    expect(text).toContain('agentd_llm_calls_total{model="scripted",outcome="LLM_HTTP"} 1');
    expect(text).toContain('agentd_llm_calls_total{model="scripted",outcome="ok"} 1');
    expect(text).toContain('agentd_llm_retries_total{model="scripted"} 1');
    expect(text).toMatch(/agentd_llm_call_duration_seconds_count\{model="scripted",outcome="ok"\} 1/);
    expect(text).toContain('agentd_llm_circuit_breaker_state{model="scripted",state="closed"} 1');
    expect(text).toContain('agentd_llm_circuit_breaker_state{model="scripted",state="open"} 0');
  });
});
