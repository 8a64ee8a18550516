import { errorDescription } from "./route-responses.js";
import { OPTIONAL_BODY_KEY } from "./zod-route-schema.js";

/** The part of an OpenAPI operation this file adds to. */
interface Operation {
  parameters?: Array<Record<string, unknown>>;
  requestBody?: { required?: boolean; content?: Record<string, { schema?: Record<string, unknown> }> };
  responses?: Record<string, unknown>;
}

type OpenApiDocument = { paths?: Record<string, Record<string, Operation>> } & Record<string, unknown>;

/**
 * Methods whose requests may carry a body: whatever the route, the body parser answers 400 to
 * malformed JSON, 413 past the body limit and 415 to a content type other than JSON.
 */
const BODY_METHODS = new Set(["post", "put", "patch", "delete"]);
const BODY_PARSER_STATUSES = [400, 413, 415];

/**
 * Completes what @fastify/swagger cannot take from route schemas: the statuses the body parser
 * answers on every route that may get a body, a body the route takes optionally (fastify-swagger
 * marks every body required), the If-None-Match header of routes that answer 304, and the
 * Last-Event-ID header of the event stream (read by the route itself, so it has no validated header
 * schema). Changes the document in place, the same way each time it is given it.
 */
export function completeOpenApiDocument(document: OpenApiDocument): OpenApiDocument {
  for (const methods of Object.values(document.paths ?? {})) {
    for (const [method, operation] of Object.entries(methods)) {
      if (BODY_METHODS.has(method)) addMissingResponses(operation, BODY_PARSER_STATUSES);
      markOptionalBody(operation);
      if (operation.responses?.["304"] !== undefined) {
        addHeader(operation, {
          name: "If-None-Match",
          in: "header",
          required: false,
          description: "the ETag of the last answer: an unchanged answer is a 304 without a body",
          schema: { type: "string" },
        });
      }
    }
  }
  const stream = document.paths?.["/agents/{id}/events/stream"]?.get;
  if (stream) {
    addHeader(stream, {
      name: "Last-Event-ID",
      in: "header",
      required: false,
      description: "the id of the last event received: the stream replays what followed it",
      schema: { type: "string", pattern: "^\\d{1,15}$" },
    });
  }
  return document;
}

/** Adds error answers the operation lacks, with the error body of its 500 (which every route has). */
function addMissingResponses(operation: Operation, statuses: readonly number[]): void {
  const responses = (operation.responses ??= {});
  const internal = responses["500"];
  if (internal === undefined) return;
  for (const status of statuses) {
    responses[status] ??= { ...structuredClone(internal as object), description: errorDescription(status) };
  }
}

function markOptionalBody(operation: Operation): void {
  const body = operation.requestBody;
  for (const media of Object.values(body?.content ?? {})) {
    if (body === undefined || media.schema?.[OPTIONAL_BODY_KEY] === undefined) continue;
    delete media.schema[OPTIONAL_BODY_KEY];
    body.required = false;
  }
}

function addHeader(operation: Operation, parameter: Record<string, unknown>): void {
  if (operation.parameters?.some((existing) => existing["name"] === parameter["name"])) return;
  operation.parameters = [...(operation.parameters ?? []), parameter];
}
