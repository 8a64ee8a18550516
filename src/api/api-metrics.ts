import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from "prom-client";
import type { AgentEvent } from "../events/agent-event.js";
import { isTerminal, type RunStatus } from "../run-vocabulary/run-status.js";
import type { ApiServices } from "./api-services.js";
import type { LlmTelemetry } from "../llm/llm-call-feed.js";
import { registerDeliveryMetrics } from "../deliveries/delivery-metrics.js";

const ACTIVE_STATUSES: readonly RunStatus[] = ["queued", "running", "paused", "waiting"];

/** The daemon's Prometheus metrics, on their own registry. `close()` stops listening to the bus. */
export interface ApiMetrics {
  registry: Registry;
  close(): void;
}

/**
 * Metrics derived from the event bus (so no other module knows about them) plus gauges read from
 * the run manager at scrape time.
 */
export function createApiMetrics(
  services: Pick<ApiServices, "bus" | "runs" | "llm" | "storage" | "deliveries"> &
    Partial<Pick<ApiServices, "events">>,
): ApiMetrics {
  const registry = new Registry();
  // The event-loop delay histogram samples every 100 ms instead of prom-client's 10 ms: at 10 ms
  // its timer alone cost an idle daemon 8-9 ms of CPU a second (2 ms at 100 ms), and a block of the
  // loop still shows as the delay of the next sample.
  collectDefaultMetrics({ register: registry, prefix: "agentd_", eventLoopMonitoringPrecision: 100 });
  const events = new Counter({
    name: "agentd_events_total",
    help: "Events published, by type",
    labelNames: ["type"],
    registers: [registry],
  });
  const runsFinished = new Counter({
    name: "agentd_runs_finished_total",
    help: "Runs that ended, by status and reason",
    labelNames: ["status", "reason"],
    registers: [registry],
  });
  const results = new Counter({
    name: "agentd_results_total",
    help: "Final answers, by worker",
    labelNames: ["worker"],
    registers: [registry],
  });
  const tokens = new Counter({
    name: "agentd_llm_tokens_total",
    help: "Model tokens used by runs that ended (completed, failed or stopped), by agent and kind (prompt, completion)",
    labelNames: ["agent", "kind"],
    registers: [registry],
  });
  const cost = new Counter({
    name: "agentd_llm_cost_usd_total",
    help: "Model cost in USD of runs that ended (completed, failed or stopped), by agent",
    labelNames: ["agent"],
    registers: [registry],
  });
  const unsubscribeCalls = observeLlmCalls(registry, services.llm);
  const unsubscribeDeliveries = registerDeliveryMetrics(registry, services.bus, services.deliveries);
  const toolCalls = new Counter({
    name: "agentd_tool_calls_total",
    help: "Tool calls requested, by tool",
    labelNames: ["tool"],
    registers: [registry],
  });
  const toolResults = new Histogram({
    name: "agentd_tool_duration_seconds",
    help: "Tool call duration, by tool and outcome",
    labelNames: ["tool", "ok"],
    buckets: [0.01, 0.05, 0.1, 0.5, 1, 5, 15, 60, 300],
    registers: [registry],
  });
  const approvals = new Counter({
    name: "agentd_approvals_total",
    help: "Approval events, by state",
    labelNames: ["state"],
    registers: [registry],
  });
  new Gauge({
    name: "agentd_run_queue_depth",
    help: "Runs waiting for a free slot",
    registers: [registry],
    collect() {
      this.set(services.runs.queueDepth());
    },
  });
  const { storage } = services;
  if (storage) {
    new Gauge({
      name: "agentd_storage_full",
      help: "1 while the store cannot write for lack of space (new runs refused with 507 STORAGE_FULL), else 0",
      registers: [registry],
      collect() {
        this.set(storage.full ? 1 : 0);
      },
    });
    new Counter({
      name: "agentd_storage_full_episodes_total",
      help: "Times the store filled up (a write failed with ENOSPC, EDQUOT or EROFS) since the daemon started",
      registers: [registry],
      collect() {
        this.reset();
        this.inc(storage.episodes);
      },
    });
  }
  new Counter({
    name: "agentd_store_events_read_total",
    help: "Events this node read from a shared store (PostgreSQL) since it started, by agent",
    labelNames: ["agent"],
    registers: [registry],
    collect() {
      this.reset();
      for (const [agent, count] of services.events?.eventsRead() ?? []) this.inc({ agent }, count);
    },
  });
  new Gauge({
    name: "agentd_runs_active",
    help: "Runs not finished, by status",
    labelNames: ["status"],
    registers: [registry],
    collect() {
      const unfinished = services.runs.unfinished();
      for (const status of ACTIVE_STATUSES) {
        this.set({ status }, unfinished.filter((run) => run.status === status).length);
      }
    },
  });

  const observe = (event: AgentEvent) => {
    events.inc({ type: event.type });
    switch (event.type) {
      case "status":
        if (isTerminal(event.data.status)) {
          runsFinished.inc({ status: event.data.status, reason: event.data.reason ?? "" });
          // Every run's final status carries what it spent: failed and stopped runs count too.
          const { usage, cost_usd: costUsd } = event.data;
          if (usage) {
            tokens.inc({ agent: event.agent, kind: "prompt" }, usage.prompt_tokens);
            tokens.inc({ agent: event.agent, kind: "completion" }, usage.completion_tokens);
          }
          if (costUsd !== undefined) cost.inc({ agent: event.agent }, costUsd);
        }
        break;
      case "result":
        results.inc({ worker: event.data.worker });
        break;
      case "action":
        toolCalls.inc({ tool: event.data.tool });
        break;
      case "observation":
        toolResults.observe(
          { tool: event.data.tool, ok: String(event.data.ok) },
          event.data.duration_ms / 1_000,
        );
        break;
      case "approval":
        approvals.inc({ state: event.data.state });
        break;
      default:
        break;
    }
  };
  const unsubscribe = services.bus.subscribe(observe);
  return {
    registry,
    close: () => {
      unsubscribe();
      unsubscribeCalls();
      unsubscribeDeliveries();
    },
  };
}

const BREAKER_STATES = ["closed", "half_open", "open"] as const;

/** LLM calls by model and outcome, their latency, retries, and the circuit breaker's state. */
function observeLlmCalls(registry: Registry, llm: LlmTelemetry | undefined): () => void {
  if (!llm) return () => undefined;
  // The breaker is per model of the endpoint: its gauge covers the models called so far.
  const models = new Set<string>();
  const calls = new Counter({
    name: "agentd_llm_calls_total",
    help: "Model call attempts, by model and outcome (ok or the error code)",
    labelNames: ["model", "outcome"],
    registers: [registry],
  });
  const latency = new Histogram({
    name: "agentd_llm_call_duration_seconds",
    help: "Model call attempt duration, streaming included, by model and outcome",
    labelNames: ["model", "outcome"],
    buckets: [0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300],
    registers: [registry],
  });
  const retries = new Counter({
    name: "agentd_llm_retries_total",
    help: "Model calls tried again after a retryable failure, by model",
    labelNames: ["model"],
    registers: [registry],
  });
  new Gauge({
    name: "agentd_llm_circuit_breaker_state",
    help: "Each model's circuit breaker: 1 for its current state (closed, half_open, open)",
    labelNames: ["model", "state"],
    registers: [registry],
    collect() {
      for (const model of models) {
        const current = llm.breakerState(model);
        for (const state of BREAKER_STATES) this.set({ model, state }, state === current ? 1 : 0);
      }
    },
  });
  return llm.onCall((report) => {
    models.add(report.model);
    const labels = { model: report.model, outcome: report.outcome };
    calls.inc(labels);
    latency.observe(labels, report.durationMilliseconds / 1_000);
    if (report.retried) retries.inc({ model: report.model });
  });
}
