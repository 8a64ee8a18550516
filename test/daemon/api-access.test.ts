import { spawn } from "node:child_process";
import { once } from "node:events";
import { readFileSync, statSync } from "node:fs";
import path from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { AGENTD_MAIN, agentd, environmentWithoutAgentd } from "../support/agentd-cli.js";
import { type DaemonProcess, killGroup } from "../support/daemon-process.js";
import { rawRequest } from "../support/raw-http.js";
import { listRuns } from "./api-shapes.js";
import { type TestKit, useTestKit } from "../support/test-kit.js";
import { type TempProject } from "../support/temp-project.js";
import { waitFor } from "../support/wait-for.js";

/** Nothing listens there: runs started here fail, which these tests do not look at. */
const NO_LLM = "http://127.0.0.1:9/v1";

const kit = useTestKit();
const fileKit = useTestKit("file");

async function start(
  config: Record<string, unknown> = {},
  by: TestKit = kit,
): Promise<{ daemon: DaemonProcess; workspace: TempProject }> {
  const workspace = by.project({ llmUrl: NO_LLM, config });
  workspace.writeAgent("writer", { task: "write something" });
  const daemon = await by.daemon(workspace.configFile);
  return { daemon, workspace };
}

/**
 * One daemon for the tests that only send it requests: the default token and server settings, plus
 * two listed host names and one listed origin. Tests that restart a daemon or change its auth start
 * their own.
 */
let shared: { daemon: DaemonProcess; workspace: TempProject };
beforeAll(async () => {
  const server = {
    host: "127.0.0.1",
    port: 0,
    allowed_hosts: ["agentd.internal", "*.lan.example"],
    allowed_origins: ["https://tools.example.com"],
  };
  shared = await start({ server }, fileKit);
}, 60_000);

/** The `host:port` the daemon listens on, as a browser on this machine sends it. */
function hostOf(daemon: DaemonProcess): string {
  return new URL(daemon.url).host;
}

/**
 * `agentd start` on a pseudo-terminal (script(1)) as its stdout and stderr, and as its stdin too
 * unless `stdinTerminal` is false: what it printed up to its listening line, and its token.
 */
async function startOnTerminal(options: {
  stdinTerminal: boolean;
}): Promise<{ output: string; token: string }> {
  const workspace = kit.project({ llmUrl: NO_LLM });
  const command = [process.execPath, AGENTD_MAIN, "start", "--config", workspace.configFile]
    .map((word) => `'${word}'`)
    .join(" ");
  const child = spawn(
    "script",
    ["-qfec", options.stdinTerminal ? command : `${command} < /dev/null`, "/dev/null"],
    {
      env: environmentWithoutAgentd(),
      stdio: ["ignore", "pipe", "pipe"],
      detached: true,
    },
  );
  const exited = once(child, "exit");
  let output = "";
  child.stdout.setEncoding("utf8").on("data", (chunk: string) => (output += chunk));
  try {
    await waitFor(() => output.includes('"event":"listening"'), "the daemon's listening line", 40_000);
    const token = readFileSync(path.join(workspace.dataDirectory, "api.token"), "utf8").trim();
    return { output, token };
  } finally {
    killGroup(child.pid ?? 0);
    await exited;
  }
}

describe("the default API token", { timeout: 90_000 }, () => {
  it("is generated into data_dir/api.token (0600), kept off a piped stderr, and required", async () => {
    const { daemon, workspace } = shared;
    const file = path.join(workspace.dataDirectory, "api.token");
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(daemon.token).toMatch(/^[A-Za-z0-9_-]{43}$/);
    // stderr is a pipe here, as under systemd's journal or `docker logs`: the token (and so the
    // login URL) appears nowhere in the output, the summary says how to get it.
    expect(`${daemon.stderr()}${daemon.stdout()}`).not.toContain(daemon.token);
    expect(daemon.stderr()).toContain(
      `run \`agentd token --url --config ${workspace.configFile}\` for the URL`,
    );
    // (port 0 in this config: AGENTD_URL names the port the daemon took.)
    const url = await agentd(["token", "--url", "--config", workspace.configFile], {
      environment: { AGENTD_URL: daemon.url },
    });
    expect(url.stdout.trim()).toBe(`${daemon.url}/auth/login?token=${daemon.token}`);

    expect((await fetch(`${daemon.url}/health`)).status).toBe(200);
    const anonymous = await fetch(`${daemon.url}/agents`);
    expect(anonymous.status).toBe(401);
    expect(await anonymous.json()).toMatchObject({ error: { code: "UNAUTHORIZED" } });
    expect((await daemon.request("GET", "/agents")).status).toBe(200);

    // The CLI finds it in the data folder; `agentd token` prints it.
    const token = await agentd(["token", "--config", workspace.configFile]);
    expect(token.stdout.trim()).toBe(daemon.token);
    const runs = await agentd(["runs", "--config", workspace.configFile, "--json"], {
      environment: { AGENTD_URL: daemon.url },
    });
    expect(runs.exitCode).toBe(0);
  });

  it("is shown once, in the login URL, on an interactive terminal only", async () => {
    const interactive = await startOnTerminal({ stdinTerminal: true });
    expect(interactive.output).toMatch(
      new RegExp(`log a browser in: http://127\\.0\\.0\\.1:\\d+/auth/login\\?token=${interactive.token}`),
    );
    expect(interactive.output.split(interactive.token).length - 1).toBe(1);
    expect(interactive.output).not.toContain("agentd token --url");

    // A terminal nobody types in (docker run -t, whose output docker logs keeps): the hint only.
    const unattended = await startOnTerminal({ stdinTerminal: false });
    expect(unattended.output).not.toContain(unattended.token);
    expect(unattended.output).toContain("agentd token --url");
  });

  it("is kept across restarts, and server.auth: none is refused on a non-loopback host", async () => {
    const first = await start();
    await first.daemon.kill();
    const again = await kit.daemon(first.workspace.configFile);
    expect(again.token).toBe(first.daemon.token);

    const workspace = kit.project({
      llmUrl: NO_LLM,
      config: { server: { host: "0.0.0.0", port: 0, auth: "none" } },
    });
    const refused = await agentd(["start", "--config", workspace.configFile]);
    expect(refused.exitCode).toBe(1);
    expect(refused.stderr).toContain("CONFIG_INVALID");
    expect(refused.stderr).toContain("server.auth");
  });

  it("is not needed with server.auth: none on loopback, where the Host and Origin checks still hold", async () => {
    const { daemon, workspace } = await start({ server: { host: "127.0.0.1", port: 0, auth: "none" } });
    expect(daemon.token).toBeUndefined();
    expect(() => statSync(path.join(workspace.dataDirectory, "api.token"))).toThrow();
    expect((await fetch(`${daemon.url}/agents`)).status).toBe(200);
    const rebound = await rawRequest(daemon.url, {
      path: "/agents",
      headers: { host: "attacker.example:80" },
    });
    expect(rebound.status).toBe(421);
    const crossSite = await rawRequest(daemon.url, {
      method: "POST",
      path: "/agents/writer/runs",
      headers: {
        host: hostOf(daemon),
        origin: "https://attacker.example",
        "content-type": "application/json",
      },
      body: "{}",
    });
    expect(crossSite.status).toBe(403);
  });
});

describe("browser login", { timeout: 90_000 }, () => {
  it("sets an HttpOnly, SameSite=Strict session cookie that is not the token nor a planted one, and logs out", async () => {
    const { daemon } = shared;
    const host = hostOf(daemon);
    const wrong = await rawRequest(daemon.url, { path: "/auth/login?token=nope", headers: { host } });
    expect(wrong.status).toBe(401);
    expect(wrong.body).toMatchObject({ error: { code: "UNAUTHORIZED" } });
    expect(wrong.headers["set-cookie"]).toBeUndefined();
    expect((await rawRequest(daemon.url, { path: "/auth/login", headers: { host } })).status).toBe(401);

    // A cookie planted before the login (session fixation) is neither kept nor made valid by it.
    const planted = "agentd_session=planted-by-another-site-0123456789abcdefghijklmn";
    const login = await rawRequest(daemon.url, {
      path: `/auth/login?token=${daemon.token}`,
      headers: { host, "sec-fetch-site": "none", cookie: planted },
    });
    expect(login.status).toBe(303);
    expect(login.headers.location).toBe("/");
    const [setCookie] = login.headers["set-cookie"] as string[];
    const attributes = (setCookie ?? "").split(/;\s*/);
    const [nameValue, ...flags] = attributes;
    const session = nameValue?.replace(/^agentd_session=/, "") ?? "";
    expect(nameValue).toMatch(/^agentd_session=[A-Za-z0-9_-]{43}$/);
    expect(session).not.toBe(daemon.token);
    expect(flags).toEqual(expect.arrayContaining(["HttpOnly", "SameSite=Strict", "Path=/"]));
    expect(flags).not.toContain("Secure");

    const cookie = `agentd_session=${session}`;
    expect(cookie).not.toBe(planted);
    expect(
      (await rawRequest(daemon.url, { path: "/agents", headers: { host, cookie: planted } })).status,
    ).toBe(401);
    expect((await rawRequest(daemon.url, { path: "/agents", headers: { host, cookie } })).status).toBe(200);
    // The cookie alone does not let another site change state.
    const forged = await rawRequest(daemon.url, {
      method: "POST",
      path: "/agents/writer/runs",
      headers: { host, cookie, origin: "https://attacker.example", "content-type": "application/json" },
      body: "{}",
    });
    expect(forged.status).toBe(403);
    expect(forged.body).toMatchObject({ error: { code: "ORIGIN_NOT_ALLOWED" } });
    // The daemon's own page may.
    const own = await rawRequest(daemon.url, {
      method: "POST",
      path: "/agents/writer/runs",
      headers: {
        host,
        cookie,
        origin: daemon.url,
        "sec-fetch-site": "same-origin",
        "content-type": "application/json",
      },
      body: JSON.stringify({ task: "from the dashboard" }),
    });
    expect(own.status).toBe(202);

    const logout = await rawRequest(daemon.url, {
      method: "POST",
      path: "/auth/logout",
      headers: { host, cookie, origin: daemon.url, "content-type": "application/json" },
    });
    expect(logout.status).toBe(204);
    expect(String(logout.headers["set-cookie"])).toContain("Max-Age=0");
    const after = await rawRequest(daemon.url, { path: "/agents", headers: { host, cookie } });
    expect(after.status).toBe(401);
  });
});

describe("requests a web page can send", { timeout: 90_000 }, () => {
  it("refuses a cross-site no-cors POST with no body, though the agent has a default task", async () => {
    const { daemon } = shared;
    const runIds = async () => (await listRuns(daemon)).map((run) => run.id);
    const runsBefore = await runIds();
    const host = hostOf(daemon);
    // What fetch(url, { method: "POST", mode: "no-cors" }) from another site sends.
    const noCors = await rawRequest(daemon.url, {
      method: "POST",
      path: "/agents/writer/runs",
      headers: {
        host,
        origin: "https://attacker.example",
        "sec-fetch-site": "cross-site",
        "sec-fetch-mode": "no-cors",
      },
    });
    expect(noCors.status).toBe(403);
    expect(noCors.body).toMatchObject({ error: { code: "ORIGIN_NOT_ALLOWED", message: expect.any(String) } });
    // Without Origin, Sec-Fetch-Site still tells; `null` origins (sandboxed frames) are cross-site too.
    const cases: Array<Record<string, string>> = [
      { "sec-fetch-site": "same-site" },
      { origin: "null" },
      { origin: `http://localhost:1` },
    ];
    for (const headers of cases) {
      const reply = await rawRequest(daemon.url, {
        method: "POST",
        path: "/agents/writer/runs",
        headers: { host, ...daemon.headers(), "content-type": "application/json", ...headers },
        body: "{}",
      });
      expect(reply.status, JSON.stringify(headers)).toBe(403);
    }
    // None of them started a run.
    expect(await runIds()).toEqual(runsBefore);
  });

  it("requires content-type: application/json on every POST but one with no body and no content-type", async () => {
    const { daemon } = shared;
    const host = hostOf(daemon);
    const cases: Array<{ headers: Record<string, string>; body?: string }> = [
      { headers: { "content-type": "text/plain" } },
      { headers: { "content-type": "application/x-www-form-urlencoded" }, body: "task=x" },
      { headers: { "content-type": "multipart/form-data; boundary=x" }, body: "--x--" },
      // A body without a content-type is still a body: it must say it is JSON.
      { headers: {}, body: "{}" },
    ];
    for (const { headers, body } of cases) {
      const reply = await rawRequest(daemon.url, {
        method: "POST",
        path: "/agents/writer/runs",
        headers: { host, ...daemon.headers(), ...headers },
        ...(body === undefined ? {} : { body }),
      });
      expect(reply.status, JSON.stringify(headers)).toBe(415);
      expect(reply.body).toMatchObject({ error: { code: "UNSUPPORTED_MEDIA_TYPE" } });
    }
    const bodilessCases: Array<Record<string, string>> = [
      { "content-type": "application/json; charset=utf-8" },
      {},
    ];
    for (const headers of bodilessCases) {
      const bodiless = await rawRequest(daemon.url, {
        method: "POST",
        path: "/agents/writer/runs",
        headers: { host, ...daemon.headers(), ...headers },
      });
      expect(bodiless.status, JSON.stringify(headers)).toBe(202);
    }
    // Bare, but from another site: the origin rule still refuses it.
    const crossSite = await rawRequest(daemon.url, {
      method: "POST",
      path: "/agents/writer/runs",
      headers: { host, ...daemon.headers(), origin: "https://evil.example" },
    });
    expect(crossSite.status).toBe(403);
  });

  it("answers only to Host names of this daemon: a rebinding page's name is refused on every route", async () => {
    const { daemon } = shared;
    const port = new URL(daemon.url).port;
    for (const host of [
      `attacker.example:${port}`,
      `localhost.attacker.example:${port}`,
      "127.0.0.1.nip.io",
      "",
    ]) {
      for (const route of ["/health", "/agents", "/runs"]) {
        const reply = await rawRequest(daemon.url, { path: route, headers: { host, ...daemon.headers() } });
        expect(reply.status, `${host} ${route}`).toBe(421);
        expect(reply.body).toMatchObject({
          error: { code: "HOST_NOT_ALLOWED", message: expect.any(String) },
        });
      }
    }
    for (const host of [
      `127.0.0.1:${port}`,
      `localhost:${port}`,
      `LOCALHOST.:${port}`,
      `[::1]:${port}`,
      "agentd.internal",
      "box.lan.example:1",
    ]) {
      const reply = await rawRequest(daemon.url, { path: "/agents", headers: { host, ...daemon.headers() } });
      expect(reply.status, host).toBe(200);
    }
  });

  it("lets a listed origin send state-changing requests", async () => {
    const { daemon } = shared;
    const reply = await rawRequest(daemon.url, {
      method: "POST",
      path: "/agents/writer/runs",
      headers: {
        host: hostOf(daemon),
        ...daemon.headers(),
        origin: "https://tools.example.com",
        "sec-fetch-site": "cross-site",
        "content-type": "application/json",
      },
      body: "{}",
    });
    expect(reply.status).toBe(202);
  });
});
