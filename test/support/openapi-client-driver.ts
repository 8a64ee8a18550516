import {
  type DocumentedOperation,
  type DocumentedParameter,
  type JsonSchema,
  labelOf,
  successMediaType,
} from "./openapi-operations.js";

/**
 * What a user passes where a parameter or body field takes a string: path parameters (`id`, `run`)
 * and strings the driver cannot make up from the schema alone (an agent's id, a token's name).
 */
export type DriverValues = Record<string, string>;

/** The numbers a user writes: one item a page (so a second page exists), and no long-poll wait. */
const USER_NUMBERS: Record<string, number> = { limit: 1, wait: 0 };

/**
 * The TypeScript source of a client program that calls every operation of the document with
 * openapi-fetch, typed by the `paths` openapi-typescript generated into `./api.js`: written as a
 * user would (numbers as numbers, the `next` of a page passed on as `after`), so a document that
 * types a parameter other than the server reads it fails the type check. `drive(baseUrl, token)`
 * answers the status of every call.
 */
export function clientDriverSource(operations: readonly DocumentedOperation[], values: DriverValues): string {
  const calls = operations.map((operation) => callSource(operation, values));
  return [
    `import createClient from "openapi-fetch";`,
    `import type { paths } from "./api.js";`,
    ``,
    `export interface Answer { operation: string; status: number }`,
    ``,
    `export async function drive(baseUrl: string, token: string): Promise<Answer[]> {`,
    `  // Redirects as they are: GET /auth/login answers 303.`,
    `  const client = createClient<paths>({ baseUrl, headers: { authorization: \`Bearer \${token}\` }, redirect: "manual" });`,
    `  const answers: Answer[] = [];`,
    ...calls,
    `  return answers;`,
    `}`,
    ``,
  ].join("\n");
}

function callSource(documented: DocumentedOperation, values: DriverValues): string {
  const { method, path, operation } = documented;
  const label = labelOf(documented);
  const query = operation.parameters.filter((parameter) => parameter.in === "query");
  const queryEntries = query.flatMap((parameter) => {
    if (parameter.name === "after") return [];
    const literal = queryLiteral(parameter, values);
    return literal === undefined ? [] : [`${JSON.stringify(parameter.name)}: ${literal}`];
  });
  const pathEntries = operation.parameters
    .filter((parameter) => parameter.in === "path")
    .map(
      (parameter) => `${JSON.stringify(parameter.name)}: ${JSON.stringify(valueOf(parameter.name, values))}`,
    );
  // A part without parameters is left out: the generated types declare it `never`.
  const params = (queryPart: string[]) => {
    const parts = [
      ...(pathEntries.length > 0 ? [`path: { ${pathEntries.join(", ")} }`] : []),
      ...(queryPart.length > 0 ? [`query: { ${queryPart.join(", ")} }`] : []),
    ];
    return parts.length > 0 ? `params: { ${parts.join(", ")} }` : "";
  };
  const media = successMediaType(documented);
  const parseAs =
    media === "text/event-stream" ? `parseAs: "stream"` : media.startsWith("text/") ? `parseAs: "text"` : "";
  const bodySchema = operation.requestBody?.content["application/json"]?.schema;
  const body = bodySchema === undefined ? "" : `body: ${bodyLiteral(bodySchema, values)}`;
  const call = (queryPart: string[]) => {
    const options = [params(queryPart), body, parseAs].filter((part) => part !== "").join(", ");
    return `await client.${method.toUpperCase()}(${JSON.stringify(path)}, { ${options} })`;
  };
  const lines = [
    `  {`,
    `    const first = ${call(queryEntries)};`,
    `    answers.push({ operation: ${JSON.stringify(label)}, status: first.response.status });`,
  ];
  if (media === "text/event-stream") {
    lines.push(`    await first.data?.cancel();`);
  }
  // A page that says where the next starts: the next page, from `next` as the user passes it on.
  if (query.some((parameter) => parameter.name === "after") && answersNext(documented)) {
    const nextQuery = [...queryEntries, `"after": next`];
    lines.push(
      `    const next = first.data?.next;`,
      `    if (next !== undefined && next !== null) {`,
      `      const page = ${call(nextQuery)};`,
      `      answers.push({ operation: ${JSON.stringify(label)}, status: page.response.status });`,
      `    }`,
    );
  }
  lines.push(`  }`);
  return lines.join("\n");
}

function answersNext({ operation }: DocumentedOperation): boolean {
  const schema = operation.responses["200"]?.content?.["application/json"]?.schema;
  return schema?.properties?.["next"] !== undefined;
}

function valueOf(name: string, values: DriverValues): string {
  const value = values[name];
  if (value === undefined) throw new Error(`the driver has no value for "${name}": add it to the values`);
  return value;
}

/** A query parameter's value as a user writes it, or undefined to leave an optional one out. */
function queryLiteral(parameter: DocumentedParameter, values: DriverValues): string | undefined {
  const number = USER_NUMBERS[parameter.name];
  if (number !== undefined) return String(number);
  const literal = schemaLiteral(parameter.schema, values[parameter.name]);
  if (literal !== undefined) return literal;
  return parameter.required === true ? JSON.stringify(valueOf(parameter.name, values)) : undefined;
}

/** A literal for a schema the driver can fill in on its own: a number, an enum, a date-time. */
function schemaLiteral(schema: JsonSchema, known: string | undefined): string | undefined {
  if (schema.enum !== undefined && schema.enum.length > 0) {
    return JSON.stringify(known !== undefined && schema.enum.includes(known) ? known : schema.enum[0]);
  }
  if (known !== undefined) return JSON.stringify(known);
  if (schema.type === "integer" || schema.type === "number") return String(schema.minimum ?? 1);
  if (schema.type === "boolean") return "true";
  if (schema.format === "date-time") return JSON.stringify("2020-01-01T00:00:00Z");
  return undefined;
}

/** A body with its required fields (and the optional ones the values know). */
function bodyLiteral(schema: JsonSchema, values: DriverValues): string {
  const required = new Set(schema.required ?? []);
  const fields = Object.entries(schema.properties ?? {}).flatMap(([name, field]) => {
    const literal = schemaLiteral(field, values[name]) ?? (field.type === "string" ? `"text"` : undefined);
    if (literal === undefined || (!required.has(name) && values[name] === undefined)) {
      if (required.has(name)) throw new Error(`the driver cannot fill the body field "${name}"`);
      return [];
    }
    return [`${JSON.stringify(name)}: ${literal}`];
  });
  return `{ ${fields.join(", ")} }`;
}
