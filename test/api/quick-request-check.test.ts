import { describe, expect, it } from "vitest";
import type { z } from "zod";
import {
  AgentEventsQuerySchema,
  AgentParamsSchema,
  MergedEventsQuerySchema,
  RunEventsQuerySchema,
  RunParamsSchema,
  StartRunBodySchema,
  StartRunHeadersSchema,
  StreamQuerySchema,
} from "../../src/api/request-schemas.js";
import { routeSchema, zodValidatorCompiler } from "../../src/api/zod-route-schema.js";

/** Values a URL parser (or a caller) may put in a params or query object. */
const VALUES: unknown[] = [
  "",
  "0",
  "1",
  "20",
  "00020",
  "999",
  "1000",
  "1001",
  "9999",
  "10000",
  "10001",
  "60",
  "61",
  "0.5",
  "59.99",
  "1.",
  ".5",
  "1.5.2",
  "-1",
  "+1",
  " 1",
  "1 ",
  "1e3",
  "0x10",
  "abc",
  "123456789012345",
  "1234567890123456",
  "1234567890",
  "r_01HXYZ",
  "r_a.b-c",
  ".hidden",
  "a/b",
  "é",
  "\n",
  "  a task  ",
  "x".repeat(255),
  "x".repeat(256),
  "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
  ["1", "2"],
  5,
  null,
  undefined,
  {},
];

/** Every object of up to two of `keys` (and a stray key), each holding each of VALUES. */
function* inputs(keys: string[]): Generator<unknown> {
  yield* [null, undefined, "after=1", [], 3];
  const names = [...keys, "stray"];
  yield {};
  for (const first of names) {
    for (const value of VALUES) {
      yield { [first]: value };
      for (const second of names) {
        if (second === first) continue;
        for (const other of ["1", "20", "abc", undefined]) yield { [first]: value, [second]: other };
      }
    }
  }
}

const cases: Array<[string, z.ZodType, string[], "params" | "querystring" | "body" | "headers"]> = [
  ["AgentParamsSchema", AgentParamsSchema, ["id"], "params"],
  ["RunParamsSchema", RunParamsSchema, ["run"], "params"],
  ["AgentEventsQuerySchema", AgentEventsQuerySchema, ["after", "limit", "wait"], "querystring"],
  ["RunEventsQuerySchema", RunEventsQuerySchema, ["after", "limit"], "querystring"],
  ["MergedEventsQuerySchema", MergedEventsQuerySchema, ["after", "limit", "wait"], "querystring"],
  ["StreamQuerySchema", StreamQuerySchema, ["after"], "querystring"],
  ["StartRunBodySchema", StartRunBodySchema, ["task"], "body"],
  ["StartRunHeadersSchema", StartRunHeadersSchema, ["idempotency-key", "traceparent"], "headers"],
];

describe("quick checks of the hot routes", () => {
  for (const [name, schema, keys, httpPart] of cases) {
    it(`answer every input of ${name} as its zod schema does`, () => {
      const validate = zodValidatorCompiler({
        schema: routeSchema(schema),
        httpPart,
        method: "GET",
        url: "/",
      }) as (data: unknown) => { value?: unknown; error?: Error };
      let compared = 0;
      for (const input of inputs(keys)) {
        const expected = schema.safeParse(input ?? undefined);
        const answer = validate(input);
        const label = JSON.stringify(input);
        if (expected.success) {
          expect(answer.error, label).toBeUndefined();
          expect(answer.value, label).toStrictEqual(expected.data);
        } else {
          expect(answer.value, label).toBeUndefined();
          expect(answer.error?.message, label).toBeTruthy();
        }
        compared += 1;
      }
      expect(compared).toBeGreaterThan(100);
    });
  }
});
