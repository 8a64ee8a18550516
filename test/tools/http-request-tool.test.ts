import { type IncomingMessage, type Server, type ServerResponse, createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { RunControl } from "../../src/run-vocabulary/run-control.js";
import { ToolHarness } from "../support/tool-harness.js";

interface RecordedRequest {
  method: string;
  url: string;
  headers: IncomingMessage["headers"];
  body: string;
}

let harness: ToolHarness;
let server: Server;
let base: string;
const requests: RecordedRequest[] = [];
/** Set when a response the server was still writing got closed by the client. */
let clientHungUp = false;

const routes: Record<string, (request: RecordedRequest, response: ServerResponse) => void> = {
  "/echo": (request, response) => {
    response.writeHead(201, { "content-type": "application/json", "x-noise": "hidden" });
    response.end(JSON.stringify({ method: request.method, body: request.body }));
  },
  "/missing": (_request, response) => {
    response.writeHead(404, { "content-type": "text/plain" });
    response.end("no such thing");
  },
  "/moved": (_request, response) => {
    response.writeHead(302, { location: "https://elsewhere.example/" });
    response.end();
  },
  "/endless": (_request, response) => {
    response.writeHead(200, { "content-type": "text/plain" });
    const chunk = "y".repeat(16_384);
    const write = () => {
      while (response.write(chunk));
    };
    response.on("drain", write);
    response.on("close", () => (clientHungUp = true));
    write();
  },
  "/reflect": (request, response) => {
    response.writeHead(200, { "content-type": "text/plain" });
    response.end(`${"a".repeat(990)}${String(request.headers["x-token"])}${"z".repeat(5_000)}`);
  },
  "/silent": () => undefined,
  "/stalls": (_request, response) => {
    response.writeHead(200, { "content-type": "text/plain" });
    response.write("a first part");
  },
};

beforeEach(async () => {
  requests.length = 0;
  clientHungUp = false;
  server = createServer((incoming, response) => {
    let body = "";
    incoming.on("data", (chunk: Buffer) => (body += chunk.toString("utf8")));
    incoming.on("end", () => {
      const request = {
        method: incoming.method ?? "",
        url: incoming.url ?? "",
        headers: incoming.headers,
        body,
      };
      requests.push(request);
      routes[new URL(request.url, "http://localhost").pathname]?.(request, response);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterEach(async () => {
  harness.dispose();
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

describe("the http_request tool", () => {
  it("sends the method, headers and body, and returns the status line, chosen headers and body", async () => {
    harness = new ToolHarness({
      sandbox: { network: [new URL(base).host] },
      permissions: { allow: ["http_request"] },
    });
    const result = await harness.call("http_request", {
      method: "POST",
      url: `${base}/echo?x=1`,
      headers: { "content-type": "application/json", "x-request": "yes" },
      body: '{"hello":"world"}',
    });

    expect(requests).toEqual([
      expect.objectContaining({ method: "POST", url: "/echo?x=1", body: '{"hello":"world"}' }),
    ]);
    expect(requests[0]?.headers).toMatchObject({ "content-type": "application/json", "x-request": "yes" });
    expect(result).toEqual({
      ok: true,
      output:
        'HTTP 201 Created\ncontent-type: application/json\n\n{"method":"POST","body":"{\\"hello\\":\\"world\\"}"}',
    });
  });

  it("sends a secret in a header without ever showing it", async () => {
    harness = new ToolHarness({
      sandbox: { network: [new URL(base).host] },
      permissions: { allow: ["http_request"] },
      secrets: { token: "tok-12345-secret" },
    });
    const result = await harness.call("http_request", {
      method: "POST",
      url: `${base}/echo`,
      headers: { authorization: "Bearer {{secret:token}}" },
      body: "token is {{secret:token}}",
    });

    expect(requests[0]?.headers.authorization).toBe("Bearer tok-12345-secret");
    expect(result.output).toContain('"body":"token is [secret:token]"');
    expect(JSON.stringify(harness.events)).not.toContain("tok-12345-secret");
  });

  it("is not ok on an error status, and shows a redirect instead of following it", async () => {
    harness = new ToolHarness({
      sandbox: { network: [new URL(base).host] },
      permissions: { allow: ["http_request"] },
    });
    const missing = await harness.call("http_request", { method: "GET", url: `${base}/missing` });
    expect(missing).toMatchObject({ ok: false, code: "TOOL_FAILED" });
    expect(missing.output).toBe("HTTP 404 Not Found\ncontent-type: text/plain\n\nno such thing");

    const moved = await harness.call("http_request", { method: "GET", url: `${base}/moved` });
    expect(moved.output).toContain("HTTP 302 Found\nlocation: https://elsewhere.example/");
    expect(requests).toHaveLength(2);
  });

  it("stops reading a body at tools.http_max_bytes and says it was cut", async () => {
    harness = new ToolHarness({
      sandbox: { network: [new URL(base).host] },
      permissions: { allow: ["http_request"] },
      settings: { http_max_bytes: 1_000 },
    });
    const result = await harness.call("http_request", { method: "GET", url: `${base}/endless` });

    expect(result).toMatchObject({ ok: true, truncated: true });
    expect(result.output).toContain(`${"y".repeat(1_000)}\n[body cut: showing the first 1000 bytes`);
    await expect.poll(() => clientHungUp, { timeout: 10_000, interval: 25 }).toBe(true);
  });

  it("masks a secret the cut at tools.http_max_bytes splits, never showing its first part", async () => {
    harness = new ToolHarness({
      sandbox: { network: [new URL(base).host] },
      permissions: { allow: ["http_request"] },
      secrets: { token: "tok-0123456789-secret" },
      settings: { http_max_bytes: 1_000 },
    });
    const result = await harness.call("http_request", {
      method: "GET",
      url: `${base}/reflect`,
      headers: { "x-token": "{{secret:token}}" },
    });

    expect(requests[0]?.headers["x-token"]).toBe("tok-0123456789-secret");
    expect(result).toMatchObject({ ok: true, truncated: true });
    expect(result.output).toContain("aaaa");
    expect(result.output).toContain("[body cut: showing the first 1000 bytes");
    expect(result.output).not.toContain("tok-");
    expect(JSON.stringify(harness.events)).not.toContain("tok-");
  });

  it.each(["/silent", "/stalls"])("gives up at tools.http_timeout when %s never completes", async (route) => {
    harness = new ToolHarness({
      sandbox: { network: [new URL(base).host] },
      permissions: { allow: ["http_request"] },
      settings: { http_timeout: 500 },
    });
    const result = await harness.call("http_request", { method: "GET", url: `${base}${route}` });

    expect(result).toMatchObject({ ok: false, code: "TOOL_TIMEOUT" });
    expect(result.output).toContain("got no complete answer within 500 ms");
  });

  it("ends with the run when the run is stopped mid-request", async () => {
    harness = new ToolHarness({
      sandbox: { network: [new URL(base).host] },
      permissions: { allow: ["http_request"] },
    });
    const control = new RunControl();
    const call = harness.call("http_request", { method: "GET", url: `${base}/silent` }, control);
    await expect.poll(() => requests.length, { timeout: 10_000, interval: 10 }).toBe(1);

    control.stop("user_stop");

    await expect(call).rejects.toMatchObject({ code: "RUN_ABORTED", reason: "user_stop" });
  });

  it("accepts only http and https URLs, refused before any approval is asked", async () => {
    harness = new ToolHarness({ sandbox: { network: [new URL(base).host] } });
    for (const url of ["file:///etc/passwd", "ftp://example.com/x", "not a url"]) {
      const result = await harness.call("http_request", { method: "GET", url });
      expect({ url, code: result.code }).toEqual({ url, code: "TOOL_BAD_ARGUMENTS" });
    }
    expect(harness.approvalRequests).toEqual([]);
  });

  it("matches http_request(url) rules against the URL", async () => {
    harness = new ToolHarness({
      sandbox: { network: [new URL(base).host] },
      permissions: { allow: [`http_request(${base}/echo*)`] },
    });
    expect(await harness.call("http_request", { method: "GET", url: `${base}/echo` })).toMatchObject({
      ok: true,
    });
    const other = await harness.call("http_request", { method: "GET", url: `${base}/missing` });
    expect(other).toMatchObject({ ok: false, code: "TOOL_DENIED" });
    expect(harness.approvalRequests).toHaveLength(1);
    expect(requests.map((request) => request.url)).toEqual(["/echo"]);
  });

  it.each([
    "https://evil.example",
    "https://evil.example:443/x",
    "https://x@evil.example/x",
    "https://user:pass@evil.example/x",
    "https://evil.example./x",
    "https://%65vil.example/x",
    "https://evil.example\\x",
    "HTTPS://EVIL.example/x#top",
  ])("applies a deny rule to %s, another spelling of the denied place", async (url) => {
    harness = new ToolHarness({
      sandbox: { network: [new URL(base).host] },
      permissions: { allow: ["http_request"], deny: ["http_request(https://evil.example/*)"] },
    });
    const result = await harness.call("http_request", { method: "GET", url });

    expect(result).toMatchObject({ ok: false, code: "TOOL_DENIED" });
    expect(harness.approvalRequests).toEqual([]);
  });

  it.each(["/%61dmin/x", "//admin/x", "/admin%2Fx", "/admin/%2E%2E/admin/x"])(
    "applies a deny rule on a path to %s, which a server routes to the denied path, and sends nothing",
    async (pathname) => {
      harness = new ToolHarness({
        sandbox: { network: [new URL(base).host] },
        permissions: { allow: ["http_request"], deny: [`http_request(${base}/admin/*)`] },
      });
      const result = await harness.call("http_request", { method: "GET", url: `${base}${pathname}` });

      expect(result).toMatchObject({ ok: false, code: "TOOL_DENIED" });
      expect(requests).toEqual([]);
    },
  );

  it("sends nothing to a denied server whatever the spelling of its URL", async () => {
    harness = new ToolHarness({
      sandbox: { network: [new URL(base).host] },
      permissions: { allow: ["http_request"], deny: [`http_request(${base}/*)`] },
    });
    const authority = base.slice("http://".length);
    const spellings = [base, `http://user:pass@${authority}/echo`, `HTTP://${authority}\\echo`];
    for (const url of spellings) {
      const result = await harness.call("http_request", { method: "GET", url });
      expect({ url, code: result.code }).toEqual({ url, code: "TOOL_DENIED" });
    }
    expect(requests).toEqual([]);
  });

  it("reaches only the hosts of the agent's sandbox network, and nothing with network: none", async () => {
    const port = new URL(base).port;
    harness = new ToolHarness({ permissions: { allow: ["http_request"] } });
    const none = await harness.call("http_request", { method: "GET", url: `${base}/echo` });
    expect(none).toMatchObject({ ok: false, code: "HOST_NOT_ALLOWED" });
    expect(none.output).toContain("network: none");
    expect(requests).toHaveLength(0);
    harness.dispose();

    harness = new ToolHarness({
      permissions: { allow: ["http_request"] },
      sandbox: { network: ["127.0.0.1:1", "*.example.com"] },
    });
    const outside = await harness.call("http_request", { method: "GET", url: `${base}/echo` });
    expect(outside).toMatchObject({ ok: false, code: "HOST_NOT_ALLOWED" });
    expect(outside.output).toContain(`127.0.0.1:${port}`);
    const otherName = await harness.call("http_request", {
      method: "GET",
      url: `http://localhost:${port}/echo`,
    });
    expect(otherName).toMatchObject({ ok: false, code: "HOST_NOT_ALLOWED" });
    expect(requests).toHaveLength(0);
    harness.dispose();

    harness = new ToolHarness({ permissions: { allow: ["http_request"] }, sandbox: "off" });
    const unsandboxed = await harness.call("http_request", { method: "GET", url: `${base}/echo` });
    expect(unsandboxed.ok).toBe(true);
  });
});
