import { beforeAll, describe, expect, it } from "vitest";
import { type DaemonProcess } from "../support/daemon-process.js";
import { rawRequest } from "../support/raw-http.js";
import { useTestKit } from "../support/test-kit.js";

/** Nothing listens there: no run is meant to start in these tests. */
const NO_LLM = "http://127.0.0.1:9/v1";

let daemon: DaemonProcess;
const kit = useTestKit("file");
beforeAll(async () => {
  const workspace = kit.project({ llmUrl: NO_LLM });
  workspace.writeAgent("writer", { task: "write something" });
  daemon = await kit.daemon(workspace.configFile);
}, 60_000);

/** A POST as the CLI sends it, with this exact body text. */
function post(path: string, body: string) {
  return rawRequest(daemon.url, {
    method: "POST",
    path,
    headers: { ...daemon.headers(), "content-type": "application/json" },
    body,
  });
}

describe("requests refused before any route", { timeout: 60_000 }, () => {
  it("answers headers over the limit with 431 and the usual error body", async () => {
    const reply = await rawRequest(daemon.url, {
      path: "/health",
      headers: { "x-padding": "a".repeat(20_000) },
    });
    expect(reply.status).toBe(431);
    expect(reply.headers["content-type"]).toMatch(/^application\/json/);
    expect(reply.body).toEqual({
      error: {
        code: "HEADERS_TOO_LARGE",
        message: expect.stringContaining("headers are larger") as unknown,
        hint: expect.any(String) as unknown,
      },
    });
    // The daemon goes on answering.
    expect((await rawRequest(daemon.url, { path: "/health" })).status).toBe(200);
  });

  it("refuses a __proto__ key anywhere in a body, however it is spelled, and starts nothing", async () => {
    const bodies = [
      '{"__proto__": {"task": "injected"}}',
      '{"task": "nested", "inputs": {"__proto__": {"admin": true}}}',
      '{"\\u005f\\u005fproto__": {"task": "escaped"}}',
    ];
    for (const body of bodies) {
      const reply = await post("/agents/writer/runs", body);
      expect(reply.status, body).toBe(400);
      expect(reply.body, body).toEqual({
        error: {
          code: "BAD_REQUEST",
          message: 'the body has a "__proto__" key, which the API refuses',
          field: "__proto__",
          hint: expect.any(String) as unknown,
        },
      });
    }
    const runs = await daemon.request("GET", "/runs");
    expect(runs.body).toEqual({ runs: [] });
  });

  it("answers a body that is not JSON and a malformed URL with BAD_REQUEST bodies", async () => {
    const notJson = await post("/agents/writer/runs", "{task:");
    expect(notJson.status).toBe(400);
    expect(notJson.body).toMatchObject({
      error: {
        code: "BAD_REQUEST",
        message: expect.stringMatching(/^the body is not valid JSON: /) as unknown,
      },
    });
    const badUrl = await rawRequest(daemon.url, { path: "/agents/%zz", headers: daemon.headers() });
    expect(badUrl.status).toBe(400);
    expect(badUrl.body).toMatchObject({
      error: { code: "BAD_REQUEST", message: expect.any(String) as unknown },
    });
  });
});
