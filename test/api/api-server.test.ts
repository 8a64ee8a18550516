import { afterEach, describe, expect, it } from "vitest";
import { type ApiFixture, startApiFixture } from "./api-fixture.js";

interface ErrorResponse {
  error: { code: string; message: string; field?: string };
}

describe("HTTP API", () => {
  let fixture: ApiFixture;
  afterEach(() => fixture.close());

  it("answers /health without a token and refuses everything else without the right one", async () => {
    fixture = await startApiFixture({ token: "s3cret-token" });
    const health = await fetch(`${fixture.url}/health`);
    expect(health.status).toBe(200);
    expect(await health.json()).toMatchObject({
      status: "ok",
      version: "9.9.9",
      uptime_seconds: expect.any(Number),
    });

    const missing = await fetch(`${fixture.url}/agents`);
    expect(missing.status).toBe(401);
    expect(((await missing.json()) as ErrorResponse).error.code).toBe("UNAUTHORIZED");
    const wrong = await fetch(`${fixture.url}/agents`, { headers: { authorization: "Bearer s3cret-tokeN" } });
    expect(wrong.status).toBe(401);
    const metrics = await fetch(`${fixture.url}/metrics`);
    expect(metrics.status).toBe(401);

    const right = await fixture.request("/agents");
    expect(right.status).toBe(200);
  });

  it("says which address is taken when another process listens on the port", async () => {
    fixture = await startApiFixture();
    const port = Number(new URL(fixture.url).port);
    const refused = await startApiFixture({ port }).catch((error: unknown) => error);
    expect(refused).toMatchObject({
      code: "ADDRESS_IN_USE",
      field: "server.port",
      message: `another process already listens on 127.0.0.1:${port}`,
    });
  });

  it("lists agents and shows one; an unknown agent is a 404", async () => {
    fixture = await startApiFixture();
    const list = (await (await fixture.request("/agents")).json()) as {
      agents: Array<{ id: string; valid: boolean }>;
    };
    // By id: the order the pages follow.
    expect(list.agents.map((agent) => [agent.id, agent.valid])).toEqual([
      ["broken", false],
      ["writer", true],
    ]);
    expect(await (await fixture.request("/agents/writer")).json()).toMatchObject({
      id: "writer",
      file: "/agents/writer.md",
    });
    const missing = await fixture.request("/agents/nobody");
    expect(missing.status).toBe(404);
    expect(((await missing.json()) as ErrorResponse).error).toMatchObject({ code: "NOT_FOUND" });
    const noRoute = await fixture.request("/nothing/here");
    expect(noRoute.status).toBe(404);
    expect(((await noRoute.json()) as ErrorResponse).error.message).toContain("GET /nothing/here");
  });

  it("starts a run (202), serves it and its persisted log, and maps conflicts to 409", async () => {
    fixture = await startApiFixture();
    const started = await fixture.request("/agents/writer/runs", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ task: "notes for today" }),
    });
    expect(started.status).toBe(202);
    const { run } = (await started.json()) as { run: string };
    expect(run).toMatch(/^r_/);

    const record = await (await fixture.request(`/runs/${run}`)).json();
    expect(record).toMatchObject({ id: run, agent: "writer", status: "completed", task: "notes for today" });
    const runs = (await (await fixture.request("/runs?agent=writer&status=completed")).json()) as {
      runs: unknown[];
    };
    expect(runs.runs).toHaveLength(1);
    const log = (await (await fixture.request(`/runs/${run}/events?after=1`)).json()) as {
      events: Array<{ id: number; type: string }>;
      next: number;
    };
    expect(log.events.map((event) => event.type)).toEqual(["thought", "result", "status"]);
    expect(log.next).toBe(4);

    // Paged: `limit` events at most, and `next` carries on where the page stopped.
    const page = async (after: number, limit: number) =>
      (await (await fixture.request(`/runs/${run}/events?after=${after}&limit=${limit}`)).json()) as {
        events: Array<{ id: number }>;
        next: number;
      };
    const first = await page(0, 2);
    expect(first.events.map((event) => event.id)).toEqual([1, 2]);
    const second = await page(first.next, 2);
    expect(second.events.map((event) => event.id)).toEqual([3, 4]);
    expect((await page(second.next, 2)).events).toEqual([]);
    for (const limit of ["0", "10001", "x"]) {
      const refused = await fixture.request(`/runs/${run}/events?limit=${limit}`);
      expect(refused.status, `limit=${limit}`).toBe(400);
    }

    const withoutBody = await fixture.request("/agents/writer/runs", {
      method: "POST",
      headers: { "content-type": "application/json" },
    });
    expect(withoutBody.status).toBe(202);

    const invalid = await fixture.request("/agents/broken/runs", {
      method: "POST",
      headers: { "content-type": "application/json" },
    });
    expect(invalid.status).toBe(409);
    expect(((await invalid.json()) as ErrorResponse).error.code).toBe("CONFLICT");
    const pauseFinished = await fixture.request(`/runs/${run}/pause`, {
      method: "POST",
      headers: { "content-type": "application/json" },
    });
    expect(pauseFinished.status).toBe(409);
    expect((await fixture.request("/runs/r_missing")).status).toBe(404);
    expect(
      (
        await fixture.request("/runs/r_missing/stop", {
          method: "POST",
          headers: { "content-type": "application/json" },
        })
      ).status,
    ).toBe(404);
    expect((await fixture.request("/runs/r_missing/events")).status).toBe(404);
  });

  it.each([
    ["/agents/writer/events?after=abc", "after"],
    ["/agents/writer/events?limit=0", "limit"],
    ["/agents/writer/events?limit=5000", "limit"],
    ["/agents/writer/events?wait=soon", "wait"],
    ["/runs?status=sleeping", "status"],
    ["/events?after=bm90LWEtY3Vyc29y", "after"],
  ])("rejects GET %s with a 400 naming %s", async (pathAndQuery, field) => {
    fixture = await startApiFixture();
    const response = await fixture.request(pathAndQuery);
    expect(response.status).toBe(400);
    const body = (await response.json()) as ErrorResponse;
    expect(body.error.code).toBe("BAD_REQUEST");
    expect(body.error.message).toContain(field);
    expect(body.error.field).toBe(field);
  });

  it("validates decisions and passes them to the approvals service", async () => {
    fixture = await startApiFixture();
    fixture.approvals.pending = [
      { id: "ap_1", agent: "writer", run: "r_1", tool: "shell", arguments: { command: "ls" } },
    ];
    const post = (body: string | undefined) =>
      fixture.request("/approvals/ap_1", {
        method: "POST",
        headers: { "content-type": "application/json" },
        ...(body === undefined ? {} : { body }),
      });

    const maybe = await post(JSON.stringify({ decision: "maybe" }));
    expect(maybe.status).toBe(400);
    expect(((await maybe.json()) as ErrorResponse).error).toMatchObject({ field: "decision" });
    const missing = await post(undefined);
    expect(missing.status).toBe(400);
    expect(((await missing.json()) as ErrorResponse).error.message).toContain("decision");
    const broken = await post("{not json");
    expect(broken.status).toBe(400);
    expect(((await broken.json()) as ErrorResponse).error.code).toBe("BAD_REQUEST");

    expect(await (await fixture.request("/approvals")).json()).toMatchObject({ approvals: [{ id: "ap_1" }] });
    const approved = await post(JSON.stringify({ decision: "approve", scope: "run" }));
    expect(approved.status).toBe(200);
    expect(fixture.approvals.decisions).toEqual([{ id: "ap_1", decision: "approve", scope: "run" }]);
    const again = await post(JSON.stringify({ decision: "deny" }));
    expect(again.status).toBe(404);
  });

  it("publishes an OpenAPI document built from the route schemas", async () => {
    fixture = await startApiFixture();
    const document = (await (await fixture.request("/openapi.json")).json()) as {
      paths: Record<string, Record<string, { parameters?: Array<{ name: string }> }>>;
    };
    expect(Object.keys(document.paths)).toEqual(
      expect.arrayContaining([
        "/health",
        "/agents/{id}/events",
        "/events",
        "/approvals/{id}",
        "/runs/{run}/stop",
      ]),
    );
    const parameters = document.paths["/agents/{id}/events"]?.get?.parameters?.map(
      (parameter) => parameter.name,
    );
    expect(parameters).toEqual(expect.arrayContaining(["after", "limit", "wait", "id"]));
  });

  it("exposes metrics derived from the events", async () => {
    fixture = await startApiFixture();
    fixture.runs.queued = 3;
    await fixture.request("/agents/writer/runs", {
      method: "POST",
      headers: { "content-type": "application/json" },
    });
    fixture.bus.publish({
      agent: "writer",
      run: "r_1",
      type: "action",
      data: { call_id: "c1", tool: "shell", arguments: {} },
    });
    const text = await (await fixture.request("/metrics")).text();
    expect(text).toContain('agentd_events_total{type="thought"} 1');
    expect(text).toContain('agentd_runs_finished_total{status="completed",reason=""} 1');
    expect(text).toContain('agentd_llm_tokens_total{agent="writer",kind="prompt"} 10');
    expect(text).toContain('agentd_llm_cost_usd_total{agent="writer"} 0.25');
    expect(text).toContain('agentd_tool_calls_total{tool="shell"} 1');
    expect(text).toContain("agentd_run_queue_depth 3");
  });
});
