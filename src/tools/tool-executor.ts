import type { ErrorCode } from "../errors/error-codes.js";
import type { AgentDefinition } from "../definitions/agent-definition.js";
import type { EventPublisher } from "../events/event-bus.js";
import type { RunControl } from "../run-vocabulary/run-control.js";
import type { Usage } from "../run-vocabulary/run-status.js";

/** A tool as the model sees it: an OpenAI function schema. */
export interface ToolSpec {
  name: string;
  description: string;
  /** JSON Schema of the arguments object. */
  parameters: Record<string, unknown>;
}

/** One tool call from the model, arguments still as the JSON text the model wrote. */
export interface ToolCall {
  callId: string;
  tool: string;
  argumentsJson: string;
}

/** What goes back to the model as the tool message. `output` is already redacted and size-capped. */
export interface ToolResult {
  ok: boolean;
  output: string;
  /** A stable code when not ok: TOOL_BAD_ARGUMENTS, TOOL_DENIED, TOOL_FAILED, ... */
  code?: ErrorCode;
  truncated?: boolean;
}

/** A run's token and cost budgets as a tool sees them: what a sub-agent may spend, and its bill. */
export interface RunSpending {
  remaining(): { tokens: number; costUsd: number };
  /** Adds a sub-agent's usage; `exhausted` ends the run `budget_exceeded` before its next model call. */
  add(usage: Usage, costUsd: number, options?: { exhausted?: boolean }): void;
}

export interface ToolRunScope {
  runId: string;
  definition: AgentDefinition;
  control: RunControl;
  events: EventPublisher;
  /** Resolves once the run's record says so (see RunContext.setStatus). */
  setStatus(status: "running" | "waiting"): Promise<void> | void;
  /** The LLM worker's budgets; absent where a caller runs tools outside the loop. */
  budget?: RunSpending;
  /**
   * The call's signal, when the caller gives one (the tracing wrapper): the run's, or one of the
   * call's own aborted with it (calls side by side); the tool, its hooks and the call's log lines
   * find the call's span by it.
   */
  signal?: AbortSignal;
}

/**
 * The one path every tool call takes: permission → approval → secret substitution → execution →
 * redaction → size cap → `action`/`observation` events. The LLM loop only calls this.
 */
export interface ToolExecutor {
  /**
   * The tools this agent may offer to the model (its `tools` list, resolved). `signal` (the run's)
   * ends the wait for an MCP server's start, and the start itself when no other run waits for it.
   */
  specs(definition: AgentDefinition, signal?: AbortSignal): Promise<ToolSpec[]>;
  execute(call: ToolCall, scope: ToolRunScope): Promise<ToolResult>;
}
