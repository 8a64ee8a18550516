import { z } from "zod";
import { AgentdError } from "../errors/agentd-error.js";
import type { AgentDefinition } from "../definitions/agent-definition.js";
import type { RunControl } from "../run-vocabulary/run-control.js";
import { defineTool, type ToolDefinition } from "../tools/tool-definition.js";
import type { ToolSource } from "../tools/tool-catalog.js";

/** The tool's name, offered to an agent that has a target with `when: agent`. */
export const NOTIFY_TOOL_NAME = "notify";

const NotifySchema = z.strictObject({
  message: z
    .string()
    .trim()
    .min(1, "say what the people you notify should know")
    .max(4_000, "keep a notification under 4,000 characters")
    .describe("What to tell the people who follow this agent: short, self-contained"),
});

/**
 * Notifications one run may send. Each is a message in a channel or an inbox; a model steered by
 * what it read could otherwise make one answer of a thousand calls (distinct messages, so no loop
 * is seen) and flood them.
 */
export const MAX_NOTIFICATIONS_PER_RUN = 10;

/** Sends the message to the agent's `when: agent` targets; resolves with how many it went to. */
export type Notifier = (definition: AgentDefinition, runId: string, message: string) => Promise<number>;

/**
 * The `notify` tool: the agent decides that something matters and its `when: agent` targets get
 * the message (a monitor stays silent until then). Offered only to an agent that has such a
 * target; allowed without a permission rule since the agent file declares it, though an explicit
 * `ask` or `deny` rule for `notify` still applies. The delivery itself never holds the run.
 */
export class NotifyToolSource implements ToolSource {
  readonly #tool: ToolDefinition;
  /** Notifications sent so far, per run in flight. */
  readonly #sent = new WeakMap<RunControl, number>();

  constructor(notifier: Notifier) {
    this.#tool = {
      ...defineTool({
        name: NOTIFY_TOOL_NAME,
        description:
          "Notify the people who follow this agent (chat, email, webhook) when something needs their attention; say nothing when nothing does",
        schema: NotifySchema,
        subject: ({ message }) => ({ kind: "texts", texts: [message] }),
        run: async ({ message }, context) => {
          const scope = context.run;
          if (!scope) throw new AgentdError("TOOL_FAILED", "notify can only be used in a run");
          const sent = this.#sent.get(scope.control) ?? 0;
          if (sent >= MAX_NOTIFICATIONS_PER_RUN) {
            throw new AgentdError(
              "TOOL_DENIED",
              `this run already sent ${MAX_NOTIFICATIONS_PER_RUN} notifications, the most one run may send`,
              { hint: "say the rest in your final answer; do not retry" },
            );
          }
          this.#sent.set(scope.control, sent + 1);
          const count = await notifier(scope.definition, scope.runId, message);
          if (count === 0)
            return { ok: false, code: "TOOL_FAILED", output: "this agent has no target to notify" };
          return { ok: true, output: `notification queued for ${count} target${count === 1 ? "" : "s"}` };
        },
      }),
      allowedWhenUnlisted: true,
    };
  }

  owns(name: string): boolean {
    return name === NOTIFY_TOOL_NAME;
  }

  async find(name: string): Promise<ToolDefinition | undefined> {
    return this.owns(name) ? this.#tool : undefined;
  }

  async expand(name: string): Promise<ToolDefinition[]> {
    return this.owns(name) ? [this.#tool] : [];
  }
}
