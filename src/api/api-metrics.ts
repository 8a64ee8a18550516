import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from "prom-client";
import type { AgentEvent } from "../events/agent-event.js";
import { isTerminal, type RunStatus } from "../runs/run-status.js";
import type { ApiServices } from "./api-services.js";

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
export function createApiMetrics(services: Pick<ApiServices, "bus" | "runs">): ApiMetrics {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry, prefix: "agentd_" });
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
  new Gauge({
    name: "agentd_runs_active",
    help: "Runs not finished, by status",
    labelNames: ["status"],
    registers: [registry],
    collect() {
      for (const status of ACTIVE_STATUSES) this.set({ status }, services.runs.list({ status }).length);
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
  return { registry, close: unsubscribe };
}
