import type { AgentDefinition } from "../definitions/agent-definition.js";
import type { RunOutcome } from "../run-vocabulary/run-outcome.js";
import type { HookPoint } from "../config/hook-settings.js";
import type { HookToolResponse } from "../tools/tool-hooks.js";

/**
 * The JSON document a hook reads on stdin, in the shape of Claude Code's hook input where it fits
 * (`hook_event_name`, `session_id`, `cwd`, `tool_name`, `tool_input`, `tool_use_id`,
 * `tool_response`), with agentd's own names for the rest. Secret values are masked before it is
 * written.
 */
export type HookInput = {
  hook_event_name: HookPoint;
  /** The run id, under Claude Code's name for it. */
  session_id: string;
  run_id: string;
  agent: string;
  /** The agent's workdir, where the hook runs. */
  cwd: string;
} & (
  | { hook_event_name: "before_tool"; tool_name: string; tool_use_id: string; tool_input: unknown }
  | {
      hook_event_name: "after_tool";
      tool_name: string;
      tool_use_id: string;
      tool_input: unknown;
      tool_response: HookToolResponse;
    }
  | {
      hook_event_name: "on_run_end";
      status: RunOutcome["status"];
      reason?: string;
      result?: string;
      error?: { code: string; message: string };
    }
);

/** What every document says: the hook point, the run, the agent and its workdir. */
export function hookInputBase(point: HookPoint, runId: string, definition: AgentDefinition) {
  return {
    hook_event_name: point,
    session_id: runId,
    run_id: runId,
    agent: definition.id,
    cwd: definition.workdir,
  };
}
