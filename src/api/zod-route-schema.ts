import type { FastifySchemaCompiler } from "fastify";
import { z } from "zod";
import { AgentdError } from "../errors/agentd-error.js";
import { formatPath } from "../schema/schema-issues.js";
import type { QuickCheck } from "./quick-request-check.js";

/** JSON Schemas made by `routeSchema`, mapped back to the zod schema that validates them. */
const zodByJsonSchema = new WeakMap<object, z.ZodType>();

/** Schemas of hot routes' params and queries, with the quick check that reads their valid input. */
const quickChecks = new WeakMap<z.ZodType, QuickCheck>();

/**
 * Gives a schema a quick check (quick-request-check.ts): a request part it reads is not run
 * through zod; one it leaves is, and zod's answer (the value, or the error) stands.
 */
export function withQuickCheck<Schema extends z.ZodType>(schema: Schema, check: QuickCheck): Schema {
  quickChecks.set(schema, check);
  return schema;
}

/** How a user names each part of a request: the whole of it, and one field of it. */
const PART_LABELS: Record<string, { whole: string; field: string }> = {
  body: { whole: "request body", field: "body field" },
  querystring: { whole: "query string", field: "query parameter" },
  params: { whole: "path", field: "path parameter" },
  headers: { whole: "headers", field: "header" },
};

/** How a query parameter that is a number is documented: its type, bounds and default. */
export interface NumericParameter {
  type: "integer" | "number";
  minimum: number;
  maximum?: number;
  default?: number;
}

/** Query-string schemas that read digits into a number, and how to document them. */
const numericParameters = new WeakMap<object, NumericParameter>();

/**
 * Marks a query-string schema that reads a number (a string of digits, transformed): the OpenAPI
 * document declares it an integer or a number with these bounds instead of a string with a pattern.
 */
export function documentedAsNumber<Schema extends z.ZodType>(
  schema: Schema,
  parameter: NumericParameter,
): Schema {
  numericParameters.set(schema, parameter);
  return schema;
}

/**
 * Marks the JSON Schema of a request part the route takes optionally (a body that may be left out):
 * completeOpenApiDocument turns it into `requestBody.required: false` and removes the mark.
 */
export const OPTIONAL_BODY_KEY = "x-agentd-optional";

/**
 * A fastify route schema from a zod schema: its JSON Schema feeds @fastify/swagger (GET
 * /openapi.json), and `zodValidatorCompiler` validates the request with the zod schema itself.
 */
export function routeSchema(schema: z.ZodType): Record<string, unknown> {
  const { $schema: _ignored, ...jsonSchema } = z.toJSONSchema(schema, {
    io: "input",
    target: "openapi-3.0",
    unrepresentable: "any",
    override: ({ zodSchema, jsonSchema }) => {
      const numeric = numericParameters.get(zodSchema);
      if (!numeric) return;
      delete jsonSchema.pattern;
      Object.assign(jsonSchema, numeric);
    },
  }) as Record<string, unknown>;
  if (schema.safeParse(undefined).success) jsonSchema[OPTIONAL_BODY_KEY] = true;
  zodByJsonSchema.set(jsonSchema, schema);
  return jsonSchema;
}

/**
 * Validates each part of a request with the zod schema behind its route schema; the parsed value
 * (with defaults and transforms) replaces the raw one. A failure is a BAD_REQUEST naming the field.
 */
export const zodValidatorCompiler: FastifySchemaCompiler<unknown> = ({ schema, httpPart }) => {
  const zodSchema = zodByJsonSchema.get(schema as object);
  if (!zodSchema) throw new Error(`route schema for ${String(httpPart)} was not made by routeSchema()`);
  const label = PART_LABELS[String(httpPart)] ?? { whole: String(httpPart), field: String(httpPart) };
  const quick = quickChecks.get(zodSchema);
  return (data: unknown) => {
    const quickValue = quick?.(data);
    if (quickValue !== undefined) return { value: quickValue };
    const parsed = zodSchema.safeParse(data ?? undefined);
    if (parsed.success) return { value: parsed.data };
    const issue = parsed.error.issues[0];
    const path = issue ? formatPath(issue.path) : "";
    const unknownKeys = issue?.code === "unrecognized_keys" ? issue.keys.join(", ") : undefined;
    const field = unknownKeys ?? path;
    const message =
      unknownKeys !== undefined
        ? `${label.field} "${unknownKeys}" is not known`
        : `${path ? `${label.field} "${path}"` : label.whole}: ${issue?.message ?? "invalid"}`;
    return {
      error: new AgentdError("BAD_REQUEST", message, {
        ...(field ? { field } : { field: String(httpPart) }),
        hint: "GET /openapi.json describes every route",
      }),
    };
  };
};
