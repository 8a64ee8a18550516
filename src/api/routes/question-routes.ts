import type { FastifyInstance } from "fastify";
import type { z } from "zod";
import { opaqueCursor, pageOf } from "../list-page.js";
import { AgentdError } from "../../errors/agentd-error.js";
import { AnswerBodySchema, PendingListQuerySchema, QuestionParamsSchema } from "../request-schemas.js";
import type { RouteContext } from "../route-context.js";
import { actorOf, recordAction } from "../record-action.js";
import { routeSchema } from "../zod-route-schema.js";
import { documented } from "../route-responses.js";
import { AnswerSchema, QuestionListSchema } from "../response-schemas.js";

/** GET /questions, POST /questions/:id: what `ask_human` is waiting on, and its answer. */
export function registerQuestionRoutes(app: FastifyInstance, { services }: RouteContext): void {
  app.get<{ Querystring: z.output<typeof PendingListQuerySchema> }>(
    "/questions",
    {
      schema: {
        summary:
          "Questions runs asked a human (ask_human) that wait for an answer, oldest first, a page at a time",
        querystring: routeSchema(PendingListQuerySchema),
        ...documented({
          operationId: "listQuestions",
          success: { status: 200, description: "Pending questions", schema: QuestionListSchema },
          errors: [400],
        }),
      },
    },
    async (request) => {
      const { after, limit } = request.query;
      const page = pageOf(
        services.questions?.list() ?? [],
        { keyOf: (question) => `${question.asked_at} ${question.id}`, ...opaqueCursor },
        after,
        limit,
      );
      return { questions: page.items, next: page.next };
    },
  );

  app.post<{ Params: z.output<typeof QuestionParamsSchema>; Body: z.output<typeof AnswerBodySchema> }>(
    "/questions/:id",
    {
      config: { role: "approve" },
      schema: {
        summary: "Answer a pending question; with choices, the answer must be one of them",
        params: routeSchema(QuestionParamsSchema),
        body: routeSchema(AnswerBodySchema),
        ...documented({
          operationId: "answerQuestion",
          success: { status: 200, description: "The answer, given to the run", schema: AnswerSchema },
          errors: [400, 404, 415, 504, 507],
        }),
      },
    },
    async (request) => {
      const { id } = request.params;
      if (!services.questions) {
        throw new AgentdError("QUESTION_NOT_FOUND", `no pending question "${id}"`);
      }
      const question = await services.questions.answer(id, request.body.answer, {
        by: "api",
        actor: actorOf(request),
      });
      await recordAction(services, request, {
        action: "question.answer",
        target: id,
        agent: question.agent,
        run: question.run,
      });
      return { question: question.id, run: question.run, answer: question.answer };
    },
  );
}
