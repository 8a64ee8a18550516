import { z } from "zod";
import { ErrorBodySchema } from "./response-schemas.js";

/** Why each error status can happen, for the OpenAPI document. */
const ERROR_DESCRIPTIONS: Record<number, string> = {
  400: "Bad input: the body, a query or path parameter (the field is named)",
  401: "Not authenticated: a missing, wrong or revoked token (on a webhook: a bad signature)",
  403: "FORBIDDEN_ROLE: the token's role may not do this (x-agentd-role names the role needed)",
  404: "No such agent, run, approval, question, token or memory",
  409: "Conflict: the agent is invalid or disabled, or the run is not in a state for this",
  413: "PAYLOAD_TOO_LARGE: the body is larger than the route takes",
  415: "The body is not application/json",
  421: "The Host header names another server",
  429: "RATE_LIMITED: too many requests; the retry-after header says in how many seconds to try again",
  500: "Internal error: the details are in the daemon log",
  503: "SHUTTING_DOWN or STORE_UNAVAILABLE: the daemon is shutting down, or its database cannot be reached",
  504: "NODE_UNREACHABLE: the node running the run did not confirm the answer (it is kept and applied when that node reads it)",
  507: "STORAGE_FULL: the store has no room to record a new run (GET /health says why); it takes runs again once space returns",
};

/** What an error status of the API means, as the OpenAPI document describes it. */
export function errorDescription(status: number): string {
  return ERROR_DESCRIPTIONS[status] ?? "Error";
}

/**
 * Statuses every route can answer: a foreign Host, an internal error, a daemon shutting down. The
 * 401 of a missing or wrong token is added to the routes that need a token by annotateRouteAccess
 * (openapi-roles.ts): a route served without one lists its own 401 in `errors` if it has one.
 */
const ALWAYS = [421, 500, 503] as const;

function jsonSchemaOf(schema: z.ZodType, description: string): Record<string, unknown> {
  const { $schema: _ignored, ...jsonSchema } = z.toJSONSchema(schema, {
    io: "output",
    target: "openapi-3.0",
    unrepresentable: "any",
    reused: "inline",
  }) as Record<string, unknown>;
  return { description, ...jsonSchema };
}

export interface RouteDocumentation {
  /** A stable name for code generators: `listAgents`, `startRun`. */
  operationId: string;
  /** The success status and what it answers. */
  success: { status: number; description: string; schema: z.ZodType };
  /** Other successful answers the route can give (a duplicate's 200 beside a 202). */
  alsoSuccess?: ReadonlyArray<{ status: number; description: string; schema: z.ZodType }>;
  /** Answers without a body (a 304 to If-None-Match). */
  bodiless?: ReadonlyArray<{ status: number; description: string }>;
  /**
   * Error statuses this route answers besides those every route can (421, 500, 503) and the 401 and
   * 403 its access brings (openapi-roles.ts).
   */
  errors?: readonly number[];
}

/**
 * The OpenAPI part of a route schema: its operationId and one response per status, the errors with
 * the error body. Responses are documentation only: answers are serialized as they are, never
 * filtered by these schemas.
 */
export function documented(documentation: RouteDocumentation): Record<string, unknown> {
  const { operationId, success, alsoSuccess = [], bodiless = [], errors = [] } = documentation;
  const others = Object.fromEntries([
    ...alsoSuccess.map((answer) => [answer.status, jsonSchemaOf(answer.schema, answer.description)]),
    ...bodiless.map((answer) => [answer.status, { description: answer.description, type: "null" }]),
  ]);
  return {
    operationId,
    response: {
      ...others,
      [success.status]: jsonSchemaOf(success.schema, success.description),
      ...errorResponses(errors),
    },
  };
}

/** The error body's JSON Schema, converted once: every route lists it for several statuses. */
let errorBodySchema: Record<string, unknown> | undefined;

/** The error responses of a route: `errors` and those every route can answer, with the error body. */
export function errorResponses(errors: readonly number[]): Record<number, unknown> {
  errorBodySchema ??= jsonSchemaOf(ErrorBodySchema, "");
  const response: Record<number, unknown> = {};
  for (const status of [...new Set([...errors, ...ALWAYS])].sort((left, right) => left - right)) {
    response[status] = {
      ...structuredClone(errorBodySchema),
      description: ERROR_DESCRIPTIONS[status] ?? "Error",
    };
  }
  return response;
}
