import type { FastifyInstance } from "fastify";
import { z } from "zod";
import { AgentdError } from "../../errors/agentd-error.js";
import { actorOf, recordAction } from "../record-action.js";
import { AgentParamsSchema } from "../request-schemas.js";
import type { RouteContext } from "../route-context.js";
import { documented } from "../route-responses.js";
import { routeSchema } from "../zod-route-schema.js";

/** What enable and disable answer: the agent's state after the change. */
export const AgentSwitchSchema = z.looseObject({
  id: z.string(),
  enabled: z.boolean().describe("whether the scheduler, triggers and POST /agents/:id/runs may start it"),
  switched_off: z
    .looseObject({ by: z.string(), at: z.string() })
    .nullable()
    .describe("who turned it off and when; null once enabled"),
});

const ACTIONS = ["enable", "disable"] as const;

/**
 * POST /agents/:id/enable and /disable: an operator turns an agent off and on again without
 * touching its file (kept in data_dir, src/definitions/agent-switches.ts). Role `run`: whoever may
 * start the agent's runs may also stop it from being started, and enabling never goes past what the
 * file allows (a file saying `enabled: false` keeps the agent off: 409).
 */
export function registerAgentSwitchRoutes(app: FastifyInstance, { services, clock }: RouteContext): void {
  for (const action of ACTIONS) {
    app.post<{ Params: z.output<typeof AgentParamsSchema> }>(
      `/agents/:id/${action}`,
      {
        config: { role: "run" },
        schema: {
          summary:
            action === "disable"
              ? "Turn the agent off: no scheduled, triggered or API run starts until it is enabled (runs in flight go on); survives a restart"
              : "Turn an agent an operator disabled back on (409 AGENT_DISABLED when its file says enabled: false)",
          params: routeSchema(AgentParamsSchema),
          ...documented({
            operationId: `${action}Agent`,
            success: {
              status: 200,
              description: "The agent's state after the change",
              schema: AgentSwitchSchema,
            },
            errors: [400, 404, 409, 415, 507],
          }),
        },
      },
      async (request) => {
        const { id } = request.params;
        const switches = services.switches;
        const agent = services.agents.get(id);
        if (agent === undefined) {
          throw new AgentdError("NOT_FOUND", `no agent "${id}"`, {
            field: "id",
            hint: "GET /agents lists every agent",
          });
        }
        if (switches === undefined) {
          throw new AgentdError("CONFLICT", "this server cannot switch agents on and off");
        }
        const note = switches.disabled(id);
        if (action === "enable" && note === undefined && !agent.enabled && agent.definition !== null) {
          throw new AgentdError("AGENT_DISABLED", `agent "${id}" is disabled by its file (enabled: false)`, {
            file: agent.file,
            field: "enabled",
            hint: `set enabled: true in ${agent.file}; agentd enable only undoes agentd disable`,
            details: { state: "disabled", disabled_by: "file" },
          });
        }
        const actor = actorOf(request);
        const changed = await switches.set(id, action === "enable", {
          by: `${actor.kind}:${actor.name}`,
          at: new Date(clock.now()).toISOString(),
        });
        if (changed) await recordAction(services, request, { action: `agent.${action}`, agent: id });
        const after = services.agents.get(id);
        return {
          id,
          enabled: after?.enabled ?? false,
          switched_off: switches.disabled(id) ?? null,
        };
      },
    );
  }
}
