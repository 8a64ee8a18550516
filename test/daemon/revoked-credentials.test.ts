import { describe, expect, it } from "vitest";
import type { Role } from "../../src/access/role.js";
import { type ClientReply, type Credential, clientCall } from "../support/client-call.js";
import { useScriptedDaemon } from "../support/scripted-daemon.js";
import { textReply } from "../support/scripted-llm-server.js";
import { waitFor } from "../support/wait-for.js";
import { waitForRunEnd } from "./api-shapes.js";

const scripted = useScriptedDaemon({
  reply: textReply("done"),
  // Every request is logged at debug: the last test reads that log for tokens.
  config: { log: { level: "debug", pretty: false } },
  agents: (project) => {
    project.writeAgent("quiet", {});
  },
});

/** A request with a bearer token or a cookie, as a client sends it. */
function call(method: string, urlPath: string, credential: Credential, body?: unknown): Promise<ClientReply> {
  return clientCall(scripted.daemon.url, method, urlPath, credential, body);
}

const admin = () => ({ token: scripted.daemon.token ?? "" });

async function createToken(name: string, role: Role): Promise<string> {
  const created = await call("POST", "/tokens", admin(), { name, role });
  expect(created.status, JSON.stringify(created.body)).toBe(201);
  return (created.body as { token: string }).token;
}

async function revoke(name: string): Promise<void> {
  expect((await call("DELETE", `/tokens/${name}`, admin())).status).toBe(200);
}

async function login(token: string): Promise<string> {
  const reply = await call("GET", `/auth/login?token=${encodeURIComponent(token)}`, {});
  expect(reply.status).toBe(303);
  return (reply.headers.get("set-cookie") ?? "").split(";")[0] ?? "";
}

async function startRun(): Promise<string> {
  const started = await call("POST", "/agents/quiet/runs", admin(), { task: "go" });
  expect(started.status).toBe(202);
  return (started.body as { run: string }).run;
}

describe("a token sent in a URL", () => {
  it("is not written to the debug log, whatever the spelling of the login route", async () => {
    const token = await createToken("in-url", "read");
    const paths = [
      "/auth/login",
      "//auth/login",
      "/auth/login/",
      "/AUTH/login",
      "/auth/./login",
      "/runs",
    ].map((path) => `${path}?token=${encodeURIComponent(token)}`);
    for (const path of paths) {
      await fetch(`${scripted.daemon.url}${path}`, { redirect: "manual" }).then((reply) =>
        reply.arrayBuffer(),
      );
    }
    // Each request is logged once answered: this one's line comes after the others'.
    await call("GET", "/runs?limit=1", admin());
    const log = await waitFor(() => {
      const text = scripted.daemon.stdout() + scripted.daemon.stderr();
      return text.includes('"url":"/runs?limit=1"') ? text : undefined;
    }, "the last request in the log");
    const secretPart = token.slice("agentd_".length);
    expect(log.split("\n").filter((line) => line.includes(secretPart))).toEqual([]);
  });
});

describe("a revoked token", () => {
  it("ends its browser sessions for good: a new token of the same name does not revive them", async () => {
    const cookie = await login(await createToken("ops", "admin"));
    expect((await call("GET", "/audit", { cookie })).status).toBe(200);
    await revoke("ops");
    // The name is given again, to a token of a lesser role, before anyone used the old session.
    await createToken("ops", "read");
    const after = await call("GET", "/audit", { cookie });
    expect(after.status).toBe(401);
    expect((await call("GET", "/runs", { cookie })).status).toBe(401);
  });

  it("ends an event stream it opened, within seconds", { timeout: 60_000 }, async () => {
    const token = await createToken("watcher", "read");
    const controller = new AbortController();
    const response = await fetch(`${scripted.daemon.url}/agents/quiet/events/stream`, {
      headers: { authorization: `Bearer ${token}` },
      signal: controller.signal,
    });
    expect(response.status).toBe(200);
    const reader = (response.body as ReadableStream<Uint8Array>).getReader();
    await reader.read(); // the preamble
    await revoke("watcher");
    const run = await startRun();
    await waitForRunEnd(scripted.daemon, run);
    // Whatever came before the stream ended, nothing of the run started after the revocation.
    let received = "";
    const decoder = new TextDecoder();
    const deadline = setTimeout(() => controller.abort(), 20_000);
    try {
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        received += decoder.decode(value);
      }
    } finally {
      clearTimeout(deadline);
    }
    expect(controller.signal.aborted, "the stream was still open 20 s after the revocation").toBe(false);
    expect(received).not.toContain(run);
  });

  it("ends the event stream of a browser session that logs out", { timeout: 60_000 }, async () => {
    const cookie = await login(await createToken("browser", "read"));
    const controller = new AbortController();
    const response = await fetch(`${scripted.daemon.url}/agents/quiet/events/stream`, {
      headers: { cookie },
      signal: controller.signal,
    });
    expect(response.status).toBe(200);
    const reader = (response.body as ReadableStream<Uint8Array>).getReader();
    await reader.read(); // the preamble
    expect((await call("POST", "/auth/logout", { cookie }, {})).status).toBe(204);
    const cutOff = setTimeout(() => controller.abort(), 20_000);
    try {
      while (!(await reader.read()).done);
    } finally {
      clearTimeout(cutOff);
    }
    expect(controller.signal.aborted, "the stream was still open 20 s after the logout").toBe(false);
  });

  it("gets no events from a long poll that was waiting as it was revoked", { timeout: 60_000 }, async () => {
    const token = await createToken("poller", "read");
    const after = (
      (await call("GET", "/agents/quiet/events?limit=1000", { token })).body as {
        next: number | null;
      }
    ).next;
    const poll = call("GET", `/agents/quiet/events?wait=30${after === null ? "" : `&after=${after}`}`, {
      token,
    });
    // Either order ends in a 401 with no event: a poll that came after the revocation is refused at
    // once. The pause only makes the order this test is about, a poll already waiting, the likely one.
    await new Promise((resolve) => setTimeout(resolve, 300));
    await revoke("poller");
    const run = await startRun();
    const answered = await poll;
    expect(JSON.stringify(answered.body)).not.toContain(run);
    expect(answered.status).toBe(401);
  });
});
