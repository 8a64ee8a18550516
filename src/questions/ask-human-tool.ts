import { z } from "zod";
import { AgentdError } from "../errors/agentd-error.js";
import { formatDuration } from "../util/duration.js";
import { defineTool, type ToolDefinition } from "../tools/tool-definition.js";
import type { QuestionBroker } from "./question-broker.js";

const AskHumanSchema = z.strictObject({
  question: z.string().trim().min(1, "ask a question").describe("What you need a human to tell you"),
  choices: z
    .array(z.string().trim().min(1))
    .min(2, "give at least two choices, or none")
    .optional()
    .describe("The answers the human may pick from; leave out for a free answer"),
});

/**
 * The built-in `ask_human` tool: the run goes `waiting` while a human is asked, and the answer is
 * the observation. Unanswered within the agent's `approvals.timeout`, the model is told that nobody
 * answered and goes on. Listing it in `tools:` allows it; no approval is asked.
 */
export function askHumanTool(questions: QuestionBroker): ToolDefinition {
  return {
    ...defineTool({
      name: "ask_human",
      description:
        "Ask a human a question and wait for the answer (use when you need a decision or information only a person has)",
      schema: AskHumanSchema,
      subject: ({ question }) => ({ kind: "texts", texts: [question] }),
      run: async ({ question, choices }, context) => {
        const scope = context.run;
        if (!scope) throw new AgentdError("TOOL_FAILED", "ask_human can only be used in a run");
        const { definition, control } = scope;
        await control.waitWhilePaused();
        // The run is recorded waiting before the question is listed.
        await scope.setStatus("waiting");
        try {
          const answer = await questions.ask({
            agent: definition.id,
            run: scope.runId,
            question,
            choices,
            timeoutMilliseconds: definition.approvals.timeout,
            signal: control.signal,
            events: scope.events,
            callId: context.callId,
          });
          if (answer.state === "answered") return { ok: true, output: answer.answer };
          return {
            ok: true,
            output: `nobody answered within ${formatDuration(definition.approvals.timeout)}; go on without an answer`,
          };
        } finally {
          if (!control.signal.aborted) void scope.setStatus("running");
        }
      },
    }),
    allowedWhenUnlisted: true,
  };
}
