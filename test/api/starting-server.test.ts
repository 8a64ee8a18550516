import { once } from "node:events";
import { request as httpRequest } from "node:http";
import { connect } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { listenWhileStarting, type StartingServer } from "../../src/api/starting-server.js";
import { rawRequest } from "../support/raw-http.js";
import { type ApiFixture, startApiFixture } from "./api-fixture.js";

/** A GET with a Host header of our choosing (fetch sets its own). */
function getWithHost(url: string, host: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const request = httpRequest(url, { headers: { host } }, (response) => {
      let body = "";
      response.setEncoding("utf8").on("data", (chunk: string) => (body += chunk));
      response.on("end", () => resolve({ status: response.statusCode ?? 0, body }));
    });
    request.on("error", reject);
    request.end();
  });
}

/** Whether a promise has settled by the time the event loop gets back to us. */
async function settled(promise: Promise<unknown>): Promise<boolean> {
  let done = false;
  void promise.then(
    () => (done = true),
    () => (done = true),
  );
  await new Promise((resolve) => setImmediate(resolve));
  return done;
}

/** Resolves once the server has received `count` more requests. */
function received(server: StartingServer, count: number): Promise<void> {
  return new Promise((resolve) => {
    let seen = 0;
    const countOne = () => {
      seen += 1;
      if (seen < count) return;
      server.server.off("request", countOne);
      resolve();
    };
    server.server.on("request", countOne);
  });
}

describe("the socket a starting daemon listens on", () => {
  let starting: StartingServer | undefined;
  let fixture: ApiFixture | undefined;
  afterEach(async () => {
    await fixture?.close();
    await starting?.close();
    fixture = undefined;
    starting = undefined;
  });

  const listen = () =>
    listenWhileStarting({
      host: "127.0.0.1",
      port: 0,
      allowedHosts: [],
      version: "9.9.9",
      startedAt: new Date(),
    });

  it("answers /health with status starting and holds every other request until the API takes over", async () => {
    starting = await listen();
    const health = await fetch(`${starting.url}/health`);
    expect(health.status).toBe(200);
    expect(await health.json()).toEqual({ status: "starting", version: "9.9.9", uptime_seconds: 0 });

    const arrived = received(starting, 2);
    const agents = fetch(`${starting.url}/agents`, { headers: { authorization: "Bearer s3cret" } });
    const rebound = getWithHost(`${starting.url}/health`, "evil.example:80");
    await arrived;
    // /health still answers while both wait.
    expect(await (await fetch(`${starting.url}/health`)).json()).toMatchObject({ status: "starting" });
    expect(await settled(agents)).toBe(false);
    expect(await settled(rebound)).toBe(false);

    fixture = await startApiFixture({ token: "s3cret", listening: starting });
    expect(fixture.url).toBe(starting.url);
    const listed = await agents;
    expect(listed.status).toBe(200);
    expect(((await listed.json()) as { agents: unknown[] }).agents).toHaveLength(2);
    // A name that is not this daemon's gets no "starting" either: the API refuses it as usual.
    const refused = await rebound;
    expect(refused.status).toBe(421);
    expect(JSON.parse(refused.body)).toMatchObject({ error: { code: "HOST_NOT_ALLOWED" } });
    expect(await (await fetch(`${starting.url}/health`)).json()).toMatchObject({ status: "ok" });

    await fixture.close();
    fixture = undefined;
    starting = undefined;
    await expect(fetch(`${listed.url}`)).rejects.toThrow();
  });

  it("answers the requests it holds with 503 when the daemon stops before it is ready", async () => {
    starting = await listen();
    const arrived = once(starting.server, "request");
    const waiting = fetch(`${starting.url}/agents`);
    await arrived;
    expect(await settled(waiting)).toBe(false);
    await starting.close();
    starting = undefined;
    const answer = await waiting;
    expect(answer.status).toBe(503);
    expect(await answer.json()).toMatchObject({ error: { code: "SHUTTING_DOWN" } });
  });

  it("answers what Node's parser refuses with the usual error body, before the API exists", async () => {
    starting = await listen();
    const tooLarge = await rawRequest(starting.url, {
      path: "/agents",
      headers: { "x-large": "a".repeat(64 * 1024) },
    });
    expect(tooLarge).toMatchObject({ status: 431, body: { error: { code: "HEADERS_TOO_LARGE" } } });
    const socket = connect(Number(new URL(starting.url).port), "127.0.0.1");
    socket.end("NOT HTTP AT ALL\r\n\r\n");
    let answer = "";
    socket.setEncoding("utf8").on("data", (chunk: string) => (answer += chunk));
    await once(socket, "close");
    expect(answer).toMatch(/^HTTP\/1\.1 400 /);
    expect(JSON.parse(answer.slice(answer.indexOf("\r\n\r\n") + 4))).toMatchObject({
      error: { code: "BAD_REQUEST", message: expect.any(String) },
    });
  });

  it("says which address is taken", async () => {
    starting = await listen();
    const port = Number(new URL(starting.url).port);
    const refused = await listenWhileStarting({
      host: "127.0.0.1",
      port,
      allowedHosts: [],
      version: "9.9.9",
      startedAt: new Date(),
    }).catch((error: unknown) => error);
    expect(refused).toMatchObject({ code: "ADDRESS_IN_USE", field: "server.port" });
  });
});
