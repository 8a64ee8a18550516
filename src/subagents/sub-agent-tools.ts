import { z } from "zod";
import { AgentdError } from "../errors/agentd-error.js";
import type { AgentLookup } from "../runs/agent-availability.js";
import type { ChildRuns } from "../runs/children/child-runs.js";
import type { RunRecord } from "../run-vocabulary/run-record.js";
import { defineTool } from "../tools/tool-definition.js";
import type { ToolDefinition, ToolOutput } from "../tools/tool-definition.js";
import type { ToolSource } from "../tools/tool-catalog.js";
import { agentIdOfTool, agentToolName } from "../tools/agent-tool-name.js";

export interface SubAgentToolsOptions {
  agents: AgentLookup;
  /** Starts the child runs (the run manager); absent where runs have no manager. */
  children: ChildRuns;
}

const TaskSchema = z.strictObject({
  task: z.string().trim().min(1, "give the sub-agent a task").describe("What the sub-agent should do"),
});

/**
 * The `agent__<id>` tools: an agent's `agents:` list offers each named agent as a tool taking
 * `{ task }`. A call runs the sub-agent as a child run and answers with its result. Its usage and
 * cost are added to the calling run's budgets; a child cut off by the budget it inherited ends the
 * caller `budget_exceeded` too.
 */
export class SubAgentTools implements ToolSource {
  readonly #options: SubAgentToolsOptions;

  constructor(options: SubAgentToolsOptions) {
    this.#options = options;
  }

  owns(name: string): boolean {
    return agentIdOfTool(name) !== undefined;
  }

  async find(name: string): Promise<ToolDefinition | undefined> {
    const agentId = agentIdOfTool(name);
    if (agentId === undefined) return undefined;
    const availability = this.#options.agents(agentId);
    const description =
      availability && availability.state !== "invalid"
        ? availability.definition.description
        : `Runs the agent ${agentId}`;
    return this.#tool(agentId, description);
  }

  async expand(name: string): Promise<ToolDefinition[]> {
    const tool = await this.find(name);
    return tool ? [tool] : [];
  }

  #tool(agentId: string, description: string): ToolDefinition {
    return {
      ...defineTool({
        name: agentToolName(agentId),
        description: `${description} (a sub-agent: give it a task, its answer comes back)`,
        schema: TaskSchema,
        subject: ({ task }) => ({ kind: "texts", texts: [task] }),
        run: ({ task }, context) => this.#run(agentId, task, context.run, context.signal),
      }),
      allowedWhenUnlisted: true,
    };
  }

  async #run(
    agentId: string,
    task: string,
    scope: Parameters<ToolDefinition["run"]>[1]["run"],
    callSignal: AbortSignal,
  ): Promise<ToolOutput> {
    if (!scope) throw new AgentdError("TOOL_FAILED", "a sub-agent can only be started from a run");
    const left = scope.budget?.remaining() ?? {
      tokens: Number.POSITIVE_INFINITY,
      costUsd: Number.POSITIVE_INFINITY,
    };
    const child = await this.#options.children.runChild({
      parentRun: scope.runId,
      agent: agentId,
      task,
      budget: left,
      callSignal,
    });
    const own = this.#options.agents(agentId);
    const ownLimits = own && own.state !== "invalid" ? own.definition.limits : undefined;
    const cutByParent =
      ownLimits !== undefined &&
      (left.tokens < ownLimits.max_tokens || left.costUsd < ownLimits.max_cost_usd);
    scope.budget?.add(child.usage, child.cost_usd, {
      exhausted: child.reason === "budget_exceeded" && cutByParent,
    });
    return childOutput(child);
  }
}

/** The observation the parent's model reads: the child's answer, or how and why it did not finish. */
function childOutput(child: RunRecord): ToolOutput {
  if (child.status === "completed") return { ok: true, output: child.result ?? "" };
  const why = [child.reason, child.error?.message].filter((part) => part !== undefined).join(": ");
  const produced = child.result ? `\nWhat it produced before it ended:\n${child.result}` : "";
  return {
    ok: false,
    code: "TOOL_FAILED",
    output: `sub-agent ${child.agent} (run ${child.id}) ended ${child.status}${why ? ` (${why})` : ""}${produced}`,
  };
}
