import type { FastifyRequest } from "fastify";
import type { AuditDraft } from "../access/audit-entry.js";
import type { Actor } from "../events/actor.js";
import { ANONYMOUS } from "./api-auth.js";
import type { ApiServices } from "./api-services.js";

/** Who sent the request, for the events and the audit trail. */
export function actorOf(request: FastifyRequest): Actor {
  return request.principal?.actor ?? ANONYMOUS.actor;
}

/** Records an action a request took in the audit trail (and the agent's `audit` event). */
export async function recordAction(
  services: ApiServices,
  request: FastifyRequest,
  draft: Omit<AuditDraft, "actor">,
): Promise<void> {
  await services.audit?.record({ ...draft, actor: actorOf(request) });
}
