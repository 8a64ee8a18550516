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

function post(path: string, body: string | Uint8Array) {
  return rawRequest(daemon.url, {
    method: "POST",
    path,
    headers: { ...daemon.headers(), "content-type": "application/json" },
    body,
  });
}

describe("bodies that are not a JSON object", { timeout: 60_000 }, () => {
  it.each([
    ["null", "null", "the body must be a JSON object, not null"],
    ["an array", '[{"task": "x"}]', "the body must be a JSON object, not an array"],
    ["a string", '"do it"', "the body must be a JSON object, not a string"],
    ["a number", "42", "the body must be a JSON object, not a number"],
    ["a boolean", "true", "the body must be a JSON object, not a boolean"],
  ])("refuses %s with 400 on POST /agents/:id/runs and starts nothing", async (_kind, body, message) => {
    const reply = await post("/agents/writer/runs", body);

    expect(reply.status).toBe(400);
    expect(reply.body).toEqual({
      error: { code: "BAD_REQUEST", message, field: "body", hint: expect.any(String) as unknown },
    });
    expect((await daemon.request("GET", "/runs")).body).toEqual({ runs: [] });
  });

  it.each([
    [
      "invalid UTF-8 inside a string",
      Buffer.from([...Buffer.from('{"task": "'), 0xff, 0xfe, ...Buffer.from('"}')]),
    ],
    ["invalid UTF-8 alone", Buffer.from([0xc3, 0x28])],
    ["a byte-order mark alone", Buffer.from([0xef, 0xbb, 0xbf])],
    ["a no-break space alone", Buffer.from([0xc2, 0xa0])],
  ])("refuses %s with 400 and starts nothing", async (_kind, body) => {
    const reply = await post("/agents/writer/runs", body);

    expect(reply.status).toBe(400);
    expect(reply.body).toMatchObject({ error: { code: "BAD_REQUEST" } });
    expect((await daemon.request("GET", "/runs")).body).toEqual({ runs: [] });
  });

  it("refuses a non-object body on the approval route too", async () => {
    const reply = await post("/approvals/a_missing", "null");

    expect(reply.status).toBe(400);
    expect(reply.body).toMatchObject({ error: { code: "BAD_REQUEST", field: "body" } });
  });

  it("refuses a body over the API's 1 MiB with 413, naming that limit rather than the webhooks'", async () => {
    const content = "m".repeat(1024 * 1024);
    const reply = await rawRequest(daemon.url, {
      method: "PUT",
      path: "/agents/writer/memory",
      headers: { ...daemon.headers(), "content-type": "application/json" },
      body: JSON.stringify({ content, version: "v0" }),
    });

    expect(reply.status).toBe(413);
    expect(reply.body).toMatchObject({
      error: {
        code: "PAYLOAD_TOO_LARGE",
        hint: expect.stringMatching(/at most 1 MiB a request.*triggers\.webhook_body_limit/) as unknown,
      },
    });
  });
});
