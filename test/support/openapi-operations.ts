import { z } from "zod";

/** A JSON Schema as the document carries it: only the keys the tests read are typed. */
export type JsonSchema = {
  type?: string;
  enum?: unknown[];
  format?: string;
  properties?: Record<string, JsonSchema>;
  required?: string[];
  minimum?: number;
} & Record<string, unknown>;

const JsonSchemaSchema = z.record(z.string(), z.unknown()).transform((schema) => schema as JsonSchema);

const ParameterSchema = z.looseObject({
  name: z.string(),
  in: z.enum(["query", "path", "header", "cookie"]),
  required: z.boolean().optional(),
  schema: JsonSchemaSchema.default({}),
});

const MediaSchema = z.looseObject({ schema: JsonSchemaSchema.optional() });

const OperationSchema = z.looseObject({
  operationId: z.string(),
  parameters: z.array(ParameterSchema).default([]),
  requestBody: z
    .looseObject({ required: z.boolean().optional(), content: z.record(z.string(), MediaSchema) })
    .optional(),
  responses: z.record(z.string(), z.looseObject({ content: z.record(z.string(), MediaSchema).optional() })),
  security: z.array(z.unknown()).optional(),
  "x-agentd-role": z.enum(["public", "own", "read", "run", "approve", "admin"]),
});

export type DocumentedParameter = z.infer<typeof ParameterSchema>;
export type DocumentedOperationBody = z.infer<typeof OperationSchema>;

/** One operation of the document: `method` lowercase as the document keys it, `path` with `{param}`. */
export interface DocumentedOperation {
  method: string;
  path: string;
  operation: DocumentedOperationBody;
}

const METHODS = ["get", "put", "post", "delete", "patch"] as const;
/** Reads before writes, creations before deletions: the order a client drives them in. */
const METHOD_ORDER: Record<string, number> = { get: 0, post: 1, put: 2, patch: 3, delete: 4 };

/** Every operation the document declares, GETs first, then POST, PUT, PATCH and DELETE, each by path. */
export function operationsOf(document: unknown): DocumentedOperation[] {
  const { paths } = z
    .looseObject({ paths: z.record(z.string(), z.record(z.string(), z.unknown())) })
    .parse(document);
  const operations: DocumentedOperation[] = [];
  for (const [path, methods] of Object.entries(paths)) {
    for (const method of METHODS) {
      if (methods[method] === undefined) continue;
      const parsed = OperationSchema.safeParse(methods[method]);
      if (!parsed.success) throw new Error(`${method} ${path}: ${parsed.error.message}`);
      operations.push({ method, path, operation: parsed.data });
    }
  }
  return operations.sort(
    (left, right) =>
      (METHOD_ORDER[left.method] ?? 9) - (METHOD_ORDER[right.method] ?? 9) ||
      left.path.localeCompare(right.path),
  );
}

/** `GET /runs/{run}`: how a test names an operation. */
export function labelOf({ method, path }: DocumentedOperation): string {
  return `${method.toUpperCase()} ${path}`;
}

/** The statuses the document declares for the operation. */
export function declaredStatuses({ operation }: DocumentedOperation): number[] {
  return Object.keys(operation.responses).map(Number);
}

/** The operation's path with each `{param}` replaced by its value (URL-encoded). */
export function concretePath(path: string, values: Record<string, string>): string {
  return path.replace(/\{([^}]+)\}/g, (_match, name: string) => encodeURIComponent(values[name] ?? name));
}

/** The media type of the operation's success answer (`application/json` when it declares none). */
export function successMediaType({ operation }: DocumentedOperation): string {
  const success = Object.entries(operation.responses).find(([status]) => status.startsWith("2"));
  return Object.keys(success?.[1].content ?? {})[0] ?? "application/json";
}
