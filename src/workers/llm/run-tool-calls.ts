import { AgentdError, toAgentdError } from "../../errors/agentd-error.js";
import type { ChatMessage, ChatToolCall } from "../../llm/chat-message.js";
import { agentIdOfTool } from "../../tools/agent-tool-name.js";
import type { RunSpending, ToolExecutor, ToolResult } from "../../tools/tool-executor.js";
import type { RunContext } from "../worker.js";
import { budgetShare } from "./budget-share.js";
import { disabledToolResult, loopWarning, toolDisabledNotice, toolResultText } from "./guard-messages.js";
import type { LoopDetector } from "./loop-detector.js";
import type { RunEvents } from "./run-events.js";
import { TOOL_FAILURE_LIMIT, type ToolFailures } from "./tool-failures.js";

export interface ToolRoundParts {
  context: RunContext;
  executor: ToolExecutor;
  failures: ToolFailures;
  detector: LoopDetector;
  events: RunEvents;
  /** The run's budgets: a sub-agent's spending is added to them. */
  budget?: RunSpending;
  /** Called with each tool message as it is added (a checkpoint of the round so far). */
  onResult?: (results: readonly ChatMessage[]) => void;
}

/** The messages one round of tool calls adds to the history. */
export interface ToolRound {
  /** One tool message per call, in the order of the calls. */
  results: ChatMessage[];
  /** Guardrail notices for the model (loop warning, tool removed), sent after the results. */
  notices: string[];
}

/**
 * Runs the tool calls of one model answer through the ToolExecutor (which emits the
 * `action`/`observation` events): in order, except that consecutive sub-agent calls run side by
 * side. Waits while the run is paused before each call. Applies the loop detector (throws
 * LOOP_DETECTED at its stop level) and disables a tool after repeated failures.
 */
export async function runToolCalls(
  calls: readonly ChatToolCall[],
  parts: ToolRoundParts,
): Promise<ToolRound> {
  const { context, failures, detector, events } = parts;
  const results: ChatMessage[] = [];
  const notices: string[] = [];
  const settled = new Map<ChatToolCall, Promise<ToolResult>>();
  for (const [index, call] of calls.entries()) {
    const tool = call.function.name;
    const verdict = detector.record(tool, call.function.arguments);
    if (verdict.kind === "stop") {
      throw new AgentdError("LOOP_DETECTED", `the run was going in circles: ${verdict.description}`, {
        hint: "make the task or the agent's instructions more precise, or fix the tool that keeps failing",
        details: { tool, pattern: verdict.pattern, repeats: verdict.repeats },
      });
    }
    if (verdict.kind === "warn") {
      notices.push(loopWarning(verdict.description));
      events.publish("warning", { code: "LOOP_DETECTED", message: verdict.description });
    }
    if (failures.isDisabled(tool)) {
      results.push({ role: "tool", tool_call_id: call.id, content: answerRemovedTool(call, parts) });
      continue;
    }
    context.control.signal.throwIfAborted();
    if (context.control.halted) await context.control.waitWhilePaused();
    if (isSubAgentCall(call)) {
      // Start this and the sub-agent calls right after it together; their results keep call order.
      // Side by side, they share what is left of the run's budget.
      const group: ChatToolCall[] = [];
      for (const next of calls.slice(index)) {
        if (!isSubAgentCall(next)) break;
        if (settled.has(next) || failures.isDisabled(next.function.name)) continue;
        group.push(next);
      }
      const shared =
        parts.budget === undefined || group.length < 2
          ? parts
          : { ...parts, budget: budgetShare(parts.budget, group.length) };
      for (const next of group) {
        const started = executeOne(next, shared);
        // A call the loop detector stops before its turn is never awaited: no unhandled rejection.
        started.catch(() => undefined);
        settled.set(next, started);
      }
    }
    const result = await (settled.get(call) ?? executeOne(call, parts));
    results.push({ role: "tool", tool_call_id: call.id, content: toolResultText(result) });
    parts.onResult?.(results);
    if (failures.record(tool, result)) {
      notices.push(toolDisabledNotice(tool, TOOL_FAILURE_LIMIT));
      events.publish("warning", {
        code: "TOOL_FAILED",
        message: `${tool} failed ${TOOL_FAILURE_LIMIT} times in a row and was removed for the rest of the run`,
      });
    }
  }
  return { results, notices };
}

/**
 * A call to a tool removed earlier in the run: not run, but seen like any other call, with its
 * `action` and a failed `observation`, so a client following the run knows the model tried.
 */
function answerRemovedTool(call: ChatToolCall, parts: ToolRoundParts): string {
  const tool = call.function.name;
  const content = disabledToolResult(tool);
  parts.events.publish("action", {
    call_id: call.id,
    tool,
    arguments: parseArguments(call.function.arguments),
  });
  parts.events.publish("observation", { call_id: call.id, tool, ok: false, output: content, duration_ms: 0 });
  return content;
}

/** The arguments as the executor shows them: the JSON value, or the text when it is not JSON. */
function parseArguments(argumentsJson: string): unknown {
  try {
    return JSON.parse(argumentsJson) as unknown;
  } catch {
    return argumentsJson;
  }
}

/** One call; an executor that throws (other than the run being stopped) becomes a failed result. */
async function executeOne(call: ChatToolCall, parts: ToolRoundParts): Promise<ToolResult> {
  const { context } = parts;
  try {
    return await parts.executor.execute(
      { callId: call.id, tool: call.function.name, argumentsJson: call.function.arguments },
      {
        runId: context.runId,
        definition: context.definition,
        control: context.control,
        events: context.events,
        setStatus: (status) => context.setStatus(status),
        ...(parts.budget === undefined ? {} : { budget: parts.budget }),
      },
    );
  } catch (error) {
    if (context.control.signal.aborted) throw context.control.signal.reason;
    const failure = toAgentdError(error, "TOOL_FAILED");
    parts.events.publish("error", {
      code: failure.code,
      message: `${call.function.name}: ${failure.message}`,
    });
    return { ok: false, code: failure.code, output: failure.message };
  }
}

function isSubAgentCall(call: ChatToolCall): boolean {
  return agentIdOfTool(call.function.name) !== undefined;
}
