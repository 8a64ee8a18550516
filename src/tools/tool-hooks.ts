import type { AgentDefinition } from "../definitions/agent-definition.js";
import type { EventPublisher } from "../events/event-bus.js";

/** The run a hook belongs to. */
export interface HookRunScope {
  runId: string;
  definition: AgentDefinition;
  events: EventPublisher;
  /**
   * Stops the hook with its run (tool hooks: the call's signal, by which the call's trace scope is
   * found); `on_run_end` hooks have only their timeout.
   */
  signal?: AbortSignal;
  /** The run's signal, for `on_run_end` hooks: the run's trace scope is found by it. */
  runSignal?: AbortSignal;
}

/** A tool call as its hooks see it: the name as the agent file writes it, the parsed arguments. */
export interface HookToolCall {
  callId: string;
  tool: string;
  input: unknown;
}

/** A tool call's result as its `after_tool` hooks see it (already masked and capped). */
export interface HookToolResponse {
  ok: boolean;
  output: string;
  code?: string;
  truncated?: boolean;
}

/**
 * The hooks a tool call passes through, as the tool executor asks for them: `before_tool` may deny
 * the call (its reason returned), `after_tool` sees the result. hooks/ implements it; tools/ does
 * not import hooks/.
 */
export interface ToolHooks {
  beforeTool(call: HookToolCall, scope: HookRunScope): Promise<string | undefined>;
  afterTool(call: HookToolCall, response: HookToolResponse, scope: HookRunScope): Promise<void>;
}
