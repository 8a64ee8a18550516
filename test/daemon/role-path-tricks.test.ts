import { createConnection } from "node:net";
import { describe, expect, it } from "vitest";
import { agentd as agentdCli } from "../support/agentd-cli.js";
import { rawRequest } from "../support/raw-http.js";
import { useScriptedDaemon } from "../support/scripted-daemon.js";

const VAULT_KEY = "2f".repeat(32);

const scripted = useScriptedDaemon({
  config: { vault: { backend: "file" } },
  environment: { AGENTD_VAULT_KEY: VAULT_KEY },
  agents: (project) => {
    project.writeAgent("quiet", {});
  },
});

async function readToken(name = "reader"): Promise<string> {
  const created = await agentdCli(["token", "create", "--name", name, "--role", "read"], {
    environment: {
      AGENTD_URL: scripted.daemon.url,
      AGENTD_TOKEN: scripted.daemon.token ?? "",
      AGENTD_VAULT_KEY: VAULT_KEY,
    },
  });
  expect(created.exitCode, created.stderr).toBe(0);
  return created.stdout.trim();
}

/** The status a raw request gets: the path is sent byte for byte, never normalised by a client. */
async function status(method: string, rawPath: string, token: string, body?: string): Promise<number> {
  const { request } = await import("node:http");
  const url = new URL(scripted.daemon.url);
  return new Promise((resolve, reject) => {
    const sent = request(
      {
        host: url.hostname,
        port: url.port,
        method,
        path: rawPath,
        headers: {
          host: url.host,
          authorization: `Bearer ${token}`,
          ...(body === undefined ? {} : { "content-type": "application/json" }),
        },
      },
      (response) => {
        response.resume();
        response.on("end", () => resolve(response.statusCode ?? 0));
      },
    );
    sent.on("error", reject);
    sent.end(body);
  });
}

describe("a read token against admin routes spelled another way", () => {
  it("reaches neither the audit trail nor the tokens by HEAD, case, slashes, encodings or ;", async () => {
    const token = await readToken();
    // The routes exist and answer an admin: a 403 or 404 below is the role's doing.
    const admin = scripted.daemon.token ?? "";
    for (const rawPath of ["/audit", "/tokens"]) {
      expect(await status("GET", rawPath, admin), rawPath).toBe(200);
    }
    expect(await status("GET", "/audit", token)).toBe(403);
    const reads = [
      ["GET", "/audit"],
      ["HEAD", "/audit"],
      ["GET", "/tokens"],
      ["HEAD", "/tokens"],
      ["GET", "/AUDIT"],
      ["GET", "//audit"],
      ["GET", "/audit/"],
      ["GET", "/audit;x"],
      ["GET", "/%61udit"],
      ["GET", "/./audit"],
      ["GET", "/x/../audit"],
      ["GET", "/audit?x=/health"],
      ["GET", "/tokens%2F"],
      ["GET", "/health/../tokens"],
      ["GET", "/docs/../tokens"],
      ["GET", "/docs/%2e%2e/tokens"],
      ["GET", "/docs/..%2ftokens"],
    ];
    for (const [method, rawPath] of reads) {
      const got = await status(method as string, rawPath as string, token);
      expect([403, 404, 400], `${method} ${rawPath} answered ${got}`).toContain(got);
    }
    const writes = [
      ["POST", "/tokens", '{"name":"x","role":"admin"}'],
      ["POST", "//tokens", '{"name":"x","role":"admin"}'],
      ["POST", "/Tokens", '{"name":"x","role":"admin"}'],
      ["POST", "/tokens;a", '{"name":"x","role":"admin"}'],
      ["POST", "/docs/../tokens", '{"name":"x","role":"admin"}'],
    ];
    for (const [method, rawPath, body] of writes) {
      const got = await status(method as string, rawPath as string, token, body);
      expect([403, 404, 400], `${method} ${rawPath} answered ${got}`).toContain(got);
    }
  });
});

describe("a request that says it is another request", () => {
  it("gets no other method, no token from the query, no CORS grant and no upgrade", async () => {
    const token = await readToken("overrider");
    const url = scripted.daemon.url;
    const host = new URL(url).host;
    const asReader = { host, authorization: `Bearer ${token}` };
    const send = (method: string, path: string, headers: Record<string, string>, body?: string) =>
      rawRequest(url, { method, path, headers, ...(body === undefined ? {} : { body }) });
    const create = '{"name":"sneaky","role":"admin"}';
    const json = { "content-type": "application/json" };
    // Method overrides are not a thing here: the request is the method it was sent with.
    expect((await send("POST", "/tokens?_method=GET", { ...asReader, ...json }, create)).status).toBe(403);
    expect(
      (await send("POST", "/tokens", { ...asReader, ...json, "x-http-method-override": "GET" }, create))
        .status,
    ).toBe(403);
    expect((await send("OPTIONS", "/tokens", asReader)).status).toBe(404);
    // A token is read from Authorization (or a session cookie) only.
    for (const path of [`/runs?token=${token}`, `/runs?access_token=${token}`]) {
      expect((await send("GET", path, { host })).status, path).toBe(401);
    }
    // No page of another origin is let in: no CORS header on an answer or a preflight.
    const page = { origin: "https://elsewhere.example" };
    const read = await send("GET", "/runs", { ...asReader, ...page });
    const preflight = await send("OPTIONS", "/runs", {
      host,
      ...page,
      "access-control-request-method": "POST",
      "access-control-request-headers": "authorization, content-type",
    });
    for (const reply of [read, preflight]) {
      expect(reply.headers["access-control-allow-origin"]).toBeUndefined();
      expect(reply.headers["access-control-allow-headers"]).toBeUndefined();
    }
    // A WebSocket upgrade of the event stream without a token: refused like any request, no 101.
    const answer = await new Promise<string>((resolve, reject) => {
      const socket = createConnection({ host: "127.0.0.1", port: Number(new URL(url).port) });
      let text = "";
      socket.on("data", (chunk) => {
        text += chunk.toString("latin1");
        if (text.includes("\r\n\r\n")) socket.destroy();
      });
      socket.on("close", () => resolve(text));
      socket.on("error", reject);
      socket.write(
        `GET /agents/quiet/events/stream HTTP/1.1\r\nHost: ${host}\r\nConnection: Upgrade\r\n` +
          "Upgrade: websocket\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n",
      );
    });
    expect(answer.split("\r\n")[0]).toBe("HTTP/1.1 401 Unauthorized");
  });
});
