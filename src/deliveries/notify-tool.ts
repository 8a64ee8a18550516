import { z } from "zod";
import { AgentdError } from "../errors/agentd-error.js";
import type { AgentDefinition } from "../definitions/agent-definition.js";
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
 * Notifications one run may send, its sub-agents' runs included. Each is a message in a channel or
 * an inbox; a model steered by what it read could otherwise make one answer of a thousand calls
 * (distinct messages, so no loop is seen) and flood them, or start a hundred sub-agents that each
 * send their own ten.
 */
export const MAX_NOTIFICATIONS_PER_RUN = 10;

/** Where a run stands among the runs in flight: its tree's first run, and whether a run ended. */
export interface RunTree {
  /** The run that started `runId`'s tree of sub-agents (`runId` itself for a run of its own). */
  rootOf(runId: string): string;
  /** Whether the run ended (or is not known any more): its tree's count is let go. */
  ended(runId: string): boolean;
  /**
   * What the tree's runs sent before this daemon started counting, as their durable logs tell (a
   * run resumed after a restart): read once per tree, at its first `notify` here.
   */
  sentBefore?(root: string): Promise<number>;
}

/** Without the runs to look at: each run counts alone, and is never let go (one run, `agentd run`). */
const RUNS_ALONE: RunTree = { rootOf: (runId) => runId, ended: () => false };

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
  /** Notifications sent so far, per tree of runs in flight (by its first run). */
  readonly #sent = new Map<string, number>();
  /** Trees whose count before this daemon is being read from their logs. */
  readonly #reading = new Map<string, Promise<number>>();
  readonly #tree: () => RunTree | undefined;

  /** `tree`: where each run stands, once the daemon follows its runs (undefined before). */
  constructor(notifier: Notifier, tree: () => RunTree | undefined = () => RUNS_ALONE) {
    this.#tree = tree;
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
          const tree = this.#tree() ?? RUNS_ALONE;
          const root = tree.rootOf(scope.runId);
          await this.#countKnown(root, tree);
          // Read after the wait: calls that waited together each see the others' counts.
          const sent = this.#sent.get(root) ?? 0;
          if (sent >= MAX_NOTIFICATIONS_PER_RUN) {
            throw new AgentdError(
              "TOOL_DENIED",
              `this run and its sub-agents already sent ${MAX_NOTIFICATIONS_PER_RUN} notifications, ` +
                "the most one run may send",
              { hint: "say the rest in your final answer; do not retry" },
            );
          }
          if (sent === 0) this.#letGoOfEnded();
          this.#sent.set(root, sent + 1);
          const count = await notifier(scope.definition, scope.runId, message);
          if (count === 0)
            return { ok: false, code: "TOOL_FAILED", output: "this agent has no target to notify" };
          return { ok: true, output: `notification queued for ${count} target${count === 1 ? "" : "s"}` };
        },
      }),
      allowedWhenUnlisted: true,
    };
  }

  /**
   * Makes the tree's count known: read from its logs first (once, however many calls ask at the
   * same time), so that a restart of the daemon does not give a resumed run ten more.
   */
  async #countKnown(root: string, tree: RunTree): Promise<void> {
    if (this.#sent.has(root)) return;
    let reading = this.#reading.get(root);
    if (reading === undefined) {
      // A log that cannot be read counts nothing: the tree's count starts here, as before restarts.
      reading = tree.sentBefore === undefined ? Promise.resolve(0) : tree.sentBefore(root).catch(() => 0);
      this.#reading.set(root, reading);
    }
    try {
      const before = await reading;
      if (!this.#sent.has(root)) this.#sent.set(root, before);
    } finally {
      this.#reading.delete(root);
    }
  }

  /** Forgets the counts of trees whose first run ended: the map holds the trees in flight. */
  #letGoOfEnded(): void {
    const tree = this.#tree() ?? RUNS_ALONE;
    for (const root of this.#sent.keys()) if (tree.ended(root)) this.#sent.delete(root);
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
