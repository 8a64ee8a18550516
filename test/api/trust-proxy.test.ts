import { Writable } from "node:stream";
import { afterEach, describe, expect, it } from "vitest";
import { type ApiServer, type ApiServerOptions, startApiServer } from "../../src/api/api-server.js";
import { EventBus } from "../../src/events/event-bus.js";
import { createLogger } from "../../src/logging/logger.js";
import { FixedAgents, agentDetail } from "./api-fixture.js";

const TOKEN = "proxy-test-token-0123456789";
/** What a client (or a proxy) says about where the request came from. */
const FORWARDED = { "x-forwarded-proto": "https", "x-forwarded-for": "203.0.113.9" };

/** The API on 127.0.0.1 with a token, its debug log kept (one line per request names the client). */
async function startServer(options: Partial<ApiServerOptions>) {
  const lines: Array<Record<string, unknown>> = [];
  const destination = new Writable({
    write(chunk: Buffer, _encoding, done) {
      for (const line of chunk.toString("utf8").split("\n").filter(Boolean)) lines.push(JSON.parse(line));
      done();
    },
  });
  const logger = createLogger({ level: "debug", pretty: false, destination });
  const unused = () => {
    throw new Error("not used");
  };
  const server = await startApiServer(
    {
      agents: new FixedAgents(agentDetail("writer")),
      runs: { list: () => [], get: () => undefined, queueDepth: () => 0 },
      approvals: { list: () => [], decide: unused },
      events: { followsEveryAgent: true },
      bus: new EventBus(),
      health: { version: "test", startedAt: new Date() },
    } as unknown as Parameters<typeof startApiServer>[0],
    { host: "127.0.0.1", port: 0, token: TOKEN, logger, ...options },
  );
  return { server, lines };
}

/** The login's session cookie, and the client address the request's log line names. */
async function login(started: { server: ApiServer; lines: Array<Record<string, unknown>> }) {
  const response = await fetch(`${started.server.url}/auth/login?token=${TOKEN}`, {
    headers: FORWARDED,
    redirect: "manual",
  });
  expect(response.status).toBe(303);
  const cookie = response.headers.get("set-cookie") ?? "";
  // The log line is written once the response is done.
  await new Promise((resolve) => setImmediate(resolve));
  const logged = started.lines.filter((line) => line["msg"] === "request").at(-1);
  return { secure: /;\s*Secure/i.test(cookie), client: logged?.["client"], cookie };
}

/** A state-changing request from the page at https://<the daemon's host>, through the "proxy". */
async function logoutFromHttpsPage(server: ApiServer): Promise<number> {
  const response = await fetch(`${server.url}/auth/logout`, {
    method: "POST",
    headers: { ...FORWARDED, origin: server.url.replace("http://", "https://") },
  });
  return response.status;
}

describe("server.trust_proxy and server.secure_cookies", () => {
  let server: ApiServer | undefined;
  afterEach(async () => {
    await server?.close();
    server = undefined;
  });

  it("lets a client's own X-Forwarded-* change nothing by default", async () => {
    const started = await startServer({});
    server = started.server;
    expect(await login(started)).toMatchObject({ secure: false, client: "127.0.0.1" });
    // The page's origin is https, the request (as the socket says) http: refused as another origin.
    expect(await logoutFromHttpsPage(server)).toBe(403);
  });

  it("takes the scheme and client of a trusted proxy's X-Forwarded-*", async () => {
    const started = await startServer({ trustProxy: ["127.0.0.1"] });
    server = started.server;
    expect(await login(started)).toMatchObject({ secure: true, client: "203.0.113.9" });
    expect(await logoutFromHttpsPage(server)).toBe(204);
  });

  it("trusts no header from a peer outside the list", async () => {
    const started = await startServer({ trustProxy: ["10.0.0.0/8"] });
    server = started.server;
    expect(await login(started)).toMatchObject({ secure: false, client: "127.0.0.1" });
  });

  it("marks the cookie Secure always or never when told so", async () => {
    const always = await startServer({ secureCookies: "always" });
    server = always.server;
    expect((await login(always)).secure).toBe(true);
    await server.close();
    const never = await startServer({ trustProxy: 1, secureCookies: "never" });
    server = never.server;
    expect(await login(never)).toMatchObject({ secure: false, client: "203.0.113.9" });
  });
});
