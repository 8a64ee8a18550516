import type { FastifyInstance } from "fastify";
import { z } from "zod";
import { DEFAULT_WEBHOOK_BODY_LIMIT_BYTES } from "../../config/trigger-settings.js";
import { AgentdError } from "../../errors/agentd-error.js";
import { documented } from "../route-responses.js";
import { RunDuplicateSchema, RunStartedSchema } from "../response-schemas.js";
import type { RouteContext } from "../route-context.js";
import { createWhileStorageHasRoom } from "../storage-admission.js";
import { routeSchema } from "../zod-route-schema.js";

const HookSkippedSchema = z.looseObject({
  skipped: z.literal(true),
  reason: z.literal("filter").describe("the payload did not pass the trigger's filter: no run"),
});

/**
 * The delivery's body as the parser below keeps it: its raw bytes, which the signature covers (none
 * when the request had no body). Documented as the sender's JSON payload.
 */
const HookBodySchema = z
  .custom<Buffer | undefined>((body) => body === undefined || Buffer.isBuffer(body))
  .describe("The sender's JSON payload, exactly as it signed it");

const HookParamsSchema = z.object({
  agent: z.string().describe("the agent the trigger belongs to"),
  name: z.string().describe("the trigger's name (its `webhook:` key)"),
});

/**
 * `POST /hooks/<agent>/<name>`: a webhook delivery for an agent's trigger (src/triggers/). The one
 * route a foreign site is meant to reach: it skips the API token (role `own`: its own secret) and nothing
 * else — the Host check, the Origin check (senders are servers and send no Origin) and
 * `content-type: application/json` apply as on every route. The body reaches the trigger as the
 * raw bytes its signature covers, at most config `triggers.webhook_body_limit` (413 past it,
 * before anything is read). It answers a run id, never anything the agent made.
 */
export function registerHookRoutes(app: FastifyInstance, { services }: RouteContext): void {
  const bodyLimit = services.hooks?.bodyLimitBytes ?? DEFAULT_WEBHOOK_BODY_LIMIT_BYTES;
  void app.register(async (scope) => {
    scope.removeContentTypeParser("application/json");
    scope.addContentTypeParser("application/json", { parseAs: "buffer", bodyLimit }, (_request, body, done) =>
      done(null, body),
    );
    scope.post<{ Params: z.output<typeof HookParamsSchema> }>(
      "/hooks/:agent/:name",
      {
        bodyLimit,
        config: { role: "own" },
        schema: {
          summary:
            "Deliver a webhook to an agent's trigger: starts a run (202), a repeated delivery answers its run (200)",
          description:
            "Authenticated by the trigger's own secret, not the API token: `X-Hub-Signature-256` (signature: github), " +
            "Standard Webhooks headers (standard) or `Authorization: Bearer` (bearer). An unknown agent or trigger " +
            "answers the same 401 as a bad signature.",
          tags: ["triggers"],
          security: [],
          params: routeSchema(HookParamsSchema),
          body: routeSchema(HookBodySchema),
          ...documented({
            operationId: "deliverWebhook",
            success: { status: 202, description: "The delivery started a run", schema: RunStartedSchema },
            alsoSuccess: [
              {
                status: 200,
                description:
                  "The delivery was delivered within 24 h (the run it started; for GitHub, the same signed body under any id), or the payload did not pass the filter (skipped)",
                schema: z.union([RunDuplicateSchema, HookSkippedSchema]),
              },
            ],
            errors: [400, 401, 409, 413, 415, 429, 507],
          }),
        },
      },
      async (request, reply) => {
        const hooks = services.hooks;
        const body = Buffer.isBuffer(request.body) ? request.body : Buffer.alloc(0);
        if (hooks === undefined) {
          throw new AgentdError("UNAUTHORIZED", "the delivery is not signed with this webhook's secret");
        }
        const answer = await createWhileStorageHasRoom(services.storage, () =>
          hooks.receive({
            agent: request.params.agent,
            name: request.params.name,
            headers: request.headers,
            body,
          }),
        );
        if (answer.status === 429) reply.header("retry-after", String(answer.retryAfterSeconds));
        return reply.status(answer.status).send(answer.body);
      },
    );
  });
}
