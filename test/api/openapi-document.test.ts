import { createConfig, lintFromString } from "@redocly/openapi-core";
import { afterEach, describe, expect, it } from "vitest";
import type { z } from "zod";
import {
  AgentDetailSchema,
  AgentListSchema,
  ApprovalListSchema,
  ErrorBodySchema,
  EventPageSchema,
  HealthSchema,
  MergedEventPageSchema,
  RunEventsSchema,
  RunListSchema,
  RunRecordSchema,
  RunStartedSchema,
} from "../../src/api/response-schemas.js";
import { rawRequest } from "../support/raw-http.js";
import { type ApiFixture, startApiFixture } from "./api-fixture.js";

let fixture: ApiFixture | undefined;
afterEach(async () => {
  await fixture?.close();
  fixture = undefined;
});

interface Operation {
  operationId?: string;
  parameters?: Array<{ name: string; in: string }>;
  responses: Record<string, { description: string; content?: Record<string, unknown> }>;
}
type Paths = Record<string, Record<string, Operation>>;

async function openApiDocument(api: ApiFixture): Promise<{ text: string; paths: Paths }> {
  const text = await (await api.request("/openapi.json")).text();
  return { text, paths: (JSON.parse(text) as { paths: Paths }).paths };
}

describe("the OpenAPI document", () => {
  it("names every operation and documents its real statuses, never a default response", async () => {
    fixture = await startApiFixture();
    const { paths } = await openApiDocument(fixture);
    const operations = Object.entries(paths).flatMap(([route, methods]) =>
      Object.entries(methods).map(([method, operation]) => ({ route, method, operation })),
    );
    expect(operations.length).toBeGreaterThanOrEqual(14);
    const ids = operations.map(({ operation }) => operation.operationId);
    expect(ids.filter((id) => id === undefined)).toEqual([]);
    expect(new Set(ids).size).toBe(ids.length);
    const defaults = operations.filter(({ operation }) =>
      Object.values(operation.responses).some((response) => response.description === "Default Response"),
    );
    expect(defaults.map(({ route, method }) => `${method} ${route}`)).toEqual([]);

    const startRun = paths["/agents/{id}/runs"]?.post;
    expect(Object.keys(startRun?.responses ?? {})).toEqual(
      expect.arrayContaining(["202", "400", "401", "404", "409", "415", "421"]),
    );
    // 200 only for a repeated Idempotency-Key: the run it made, `duplicate: true`.
    expect(startRun?.responses["200"]?.description).toMatch(/Idempotency-Key/);
    const stream = paths["/agents/{id}/events/stream"]?.get;
    expect(Object.keys(stream?.responses["200"]?.content ?? {})).toEqual(["text/event-stream"]);
    expect(stream?.parameters).toEqual(
      expect.arrayContaining([expect.objectContaining({ name: "Last-Event-ID", in: "header" })]),
    );
  });

  it("declares every list route's limit and cursor, numbers as numbers", async () => {
    fixture = await startApiFixture();
    const document = JSON.parse((await openApiDocument(fixture)).text) as {
      paths: Record<
        string,
        Record<string, { parameters?: Array<{ name: string; in: string; schema: Record<string, unknown> }> }>
      >;
    };
    const query = (route: string, name: string) =>
      document.paths[route]?.["get"]?.parameters?.find(
        (parameter) => parameter.in === "query" && parameter.name === name,
      )?.schema;
    const limits: Array<[string, number, number]> = [
      ["/agents", 10_000, 10_000],
      ["/approvals", 1_000, 10_000],
      ["/questions", 1_000, 10_000],
      ["/runs/{run}/events", 1_000, 10_000],
      ["/agents/{id}/events", 100, 1_000],
      ["/events", 100, 1_000],
    ];
    for (const [route, fallback, maximum] of limits) {
      expect(query(route, "limit"), route).toEqual({
        type: "integer",
        minimum: 1,
        maximum,
        default: fallback,
      });
      expect(query(route, "after"), route).toBeDefined();
    }
    expect(query("/runs/{run}/events", "after")).toEqual({ type: "integer", minimum: 0, default: 0 });
    expect(query("/agents/{id}/events/stream", "after")).toEqual({ type: "integer", minimum: 0 });
    expect(query("/events", "wait")).toEqual({ type: "number", minimum: 0, default: 0 });
  });

  it("passes Redocly's recommended lint rules with no error", async () => {
    fixture = await startApiFixture();
    const { text } = await openApiDocument(fixture);
    const problems = await lintFromString({
      source: text,
      absoluteRef: "openapi.json",
      config: await createConfig({ extends: ["recommended"] }),
    });
    const errors = problems.filter((problem) => problem.severity === "error");
    expect(errors.map((problem) => `${problem.ruleId}: ${problem.message}`)).toEqual([]);
  });

  it("describes what the routes really answer", async () => {
    fixture = await startApiFixture();
    const api = fixture;
    const check = async (schema: z.ZodType, path: string, init?: RequestInit) => {
      const response = await api.request(path, init);
      const parsed = schema.safeParse(await response.json());
      expect(parsed.error?.issues ?? [], `${path} answered ${response.status}`).toEqual([]);
      return response.status;
    };
    const post = { method: "POST", headers: { "content-type": "application/json" }, body: "{}" };
    expect(await check(HealthSchema, "/health")).toBe(200);
    expect(await check(AgentListSchema, "/agents")).toBe(200);
    expect(await check(AgentDetailSchema, "/agents/writer")).toBe(200);
    expect(await check(RunStartedSchema, "/agents/writer/runs", post)).toBe(202);
    expect(await check(RunListSchema, "/runs")).toBe(200);
    expect(await check(RunRecordSchema, "/runs/r_1")).toBe(200);
    expect(await check(RunEventsSchema, "/runs/r_1/events")).toBe(200);
    expect(await check(EventPageSchema, "/agents/writer/events?after=0")).toBe(200);
    expect(await check(MergedEventPageSchema, "/events")).toBe(200);
    expect(await check(ApprovalListSchema, "/approvals")).toBe(200);
    expect(await check(ErrorBodySchema, "/agents/nobody")).toBe(404);
    expect(
      await check(ErrorBodySchema, "/runs/r_1/pause", {
        method: "POST",
        headers: { "content-type": "application/json" },
      }),
    ).toBe(409);
    expect(await check(ErrorBodySchema, "/agents/writer/events?limit=0")).toBe(400);
  });

  it("serves an API explorer at /docs from the installed package, with no outside address", async () => {
    fixture = await startApiFixture({ token: "s3cret-token" });
    const page = await fetch(`${fixture.url}/docs/`);
    expect(page.status).toBe(200);
    const html = await page.text();
    expect(html).toContain("swagger-ui");
    expect(html).not.toMatch(/(src|href)="https?:\/\//);
    const document = await fetch(`${fixture.url}/docs/json`);
    const explored = (await document.json()) as { openapi: string };
    expect(explored.openapi).toMatch(/^3\./);
    // Built at the first request to the docs (src/api/lazy-api-docs.ts): the same document either way.
    const served = await fetch(`${fixture.url}/openapi.json`);
    expect(await served.json()).toEqual(explored);
    const head = await fetch(`${fixture.url}/docs/static/swagger-ui.css`, { method: "HEAD" });
    expect(head.status).toBe(200);
    expect(Number(head.headers.get("content-length"))).toBeGreaterThan(1_000);
  });

  it("answers a file the explorer lacks, or a path out of /docs, as any unknown route", async () => {
    fixture = await startApiFixture();
    // fetch would resolve the dot segments itself: sent as written, as a client may.
    for (const written of ["/docs/no-such-file.js", "/docs/../agents", "/docs/static/%2e%2e/%2e%2e/agents"]) {
      const answer = await rawRequest(fixture.url, { path: written });
      expect(answer.status, written).toBe(404);
      expect(answer.body, written).toMatchObject({ error: { code: "NOT_FOUND" } });
    }
  });
});
