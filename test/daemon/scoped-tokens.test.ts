import { mkdirSync, readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { ROLES, type Role, type RouteAccess, roleAllows } from "../../src/access/role.js";
import type { PendingApproval } from "../../src/approvals/approval-broker.js";
import type { AgentEvent } from "../../src/events/agent-event.js";
import { agentd as agentdCli } from "../support/agentd-cli.js";
import { type ClientReply, clientCall } from "../support/client-call.js";
import { useScriptedDaemon } from "../support/scripted-daemon.js";
import { textReply, toolCallReply } from "../support/scripted-llm-server.js";
import { waitFor } from "../support/wait-for.js";
import { getRun, runEvents, waitForRunEnd } from "./api-shapes.js";

const VAULT_KEY = "1e".repeat(32);

const scripted = useScriptedDaemon({
  config: { vault: { backend: "file" } },
  environment: { AGENTD_VAULT_KEY: VAULT_KEY },
  agents: (project) => {
    mkdirSync(path.join(project.root, "work"));
    project.writeAgent("writer", {
      workdir: "work/writer",
      tools: ["write_file"],
      permissions: { ask: ["write_file"] },
    });
  },
});

/** A request with `token` (none: without Authorization), as a client sends it. */
function call(
  method: string,
  urlPath: string,
  token: string | undefined,
  body?: unknown,
): Promise<ClientReply> {
  return clientCall(scripted.daemon.url, method, urlPath, token === undefined ? {} : { token }, body);
}

/** `agentd <args>` against the daemon with this token. */
function agentd(args: string[], token = scripted.daemon.token ?? "", input?: string) {
  return agentdCli(args, {
    environment: {
      AGENTD_URL: scripted.daemon.url,
      AGENTD_TOKEN: token,
      AGENTD_VAULT_KEY: VAULT_KEY,
    },
    ...(input === undefined ? {} : { input }),
  });
}

/** Creates a token with `agentd token create` and returns what it printed (the token alone). */
async function createToken(name: string, role: Role): Promise<string> {
  const created = await agentd(["token", "create", "--name", name, "--role", role]);
  expect(created.exitCode, created.stderr).toBe(0);
  const token = created.stdout.trim();
  expect(token).toMatch(/^agentd_[A-Za-z0-9_-]{43}$/);
  return token;
}

/**
 * Creates a token with POST /tokens as the daemon's admin, for tests whose claim is not the CLI's
 * (the CLI's create and revoke have their own test): one request instead of a CLI process.
 */
async function apiToken(name: string, role: Role): Promise<string> {
  const created = await call("POST", "/tokens", scripted.daemon.token, { name, role });
  expect(created.status, JSON.stringify(created.body)).toBe(201);
  const token = (created.body as { token: string }).token;
  expect(token).toMatch(/^agentd_[A-Za-z0-9_-]{43}$/);
  return token;
}

/** Revokes a token with DELETE /tokens/:name as the daemon's admin. */
async function revokeWithApi(name: string): Promise<void> {
  expect((await call("DELETE", `/tokens/${name}`, scripted.daemon.token)).status).toBe(200);
}

interface AuditEntry {
  id: string;
  actor: { kind: string; name: string };
  action: string;
  agent?: string;
  run?: string;
  target?: string;
}

async function auditTrail(): Promise<AuditEntry[]> {
  const reply = await call("GET", "/audit?limit=1000", scripted.daemon.token);
  expect(reply.status).toBe(200);
  return (reply.body as { entries: AuditEntry[] }).entries;
}

type Operation = { "x-agentd-role"?: RouteAccess };

/** Every operation of the daemon's own OpenAPI document, with its declared access. */
async function operations(): Promise<Array<{ method: string; path: string; access: RouteAccess }>> {
  const document = (await call("GET", "/openapi.json", undefined)).body as {
    paths: Record<string, Record<string, Operation>>;
  };
  return Object.entries(document.paths).flatMap(([pathTemplate, methods]) =>
    Object.entries(methods).map(([method, operation]) => {
      const access = operation["x-agentd-role"];
      if (access === undefined) throw new Error(`${method} ${pathTemplate} declares no x-agentd-role`);
      return { method: method.toUpperCase(), path: pathTemplate, access };
    }),
  );
}

/** A request to an operation with made-up parameters that name nothing: it never changes anything. */
function harmless(pathTemplate: string): string {
  return pathTemplate
    .replace(/\{[^}]+\}/g, "no-such-thing")
    .replace("/events/stream", "/events/stream?wait=0");
}

describe("named, scoped tokens", () => {
  it(
    "gives each role exactly the routes the OpenAPI document declares for it (403 FORBIDDEN_ROLE below)",
    { timeout: 180_000 },
    async () => {
      const tokens = new Map<Role, string>();
      for (const role of ROLES) tokens.set(role, await apiToken(`table-${role}`, role));
      const table = await operations();
      // The document is the table; a few anchors make sure it says what the roles mean.
      const accessOf = (method: string, route: string) =>
        table.find((operation) => operation.method === method && operation.path === route)?.access;
      expect(accessOf("GET", "/runs")).toBe("read");
      expect(accessOf("POST", "/agents/{id}/runs")).toBe("run");
      expect(accessOf("POST", "/runs/{run}/stop")).toBe("run");
      expect(accessOf("POST", "/approvals/{id}")).toBe("approve");
      expect(accessOf("POST", "/questions/{id}")).toBe("approve");
      expect(accessOf("GET", "/audit")).toBe("admin");
      expect(accessOf("POST", "/tokens")).toBe("admin");
      expect(accessOf("GET", "/health")).toBe("public");
      expect(accessOf("POST", "/hooks/{agent}/{name}")).toBe("own");

      const wrong: string[] = [];
      for (const operation of table) {
        const url = harmless(operation.path);
        for (const role of ROLES) {
          // The login takes its token in the query: each role's token logs a browser in.
          const target = operation.path === "/auth/login" ? `${url}?token=${tokens.get(role) ?? ""}` : url;
          const reply = await call(
            operation.method,
            target,
            tokens.get(role),
            operation.method === "POST" ? {} : undefined,
          );
          const allowed = roleAllows(role, operation.access);
          const refused =
            reply.status === 403 &&
            (reply.body as { error?: { code?: string } })?.error?.code === "FORBIDDEN_ROLE";
          // A route with its own authentication (a webhook's secret) answers 401 to every API token alike.
          const ownAnswer = operation.access === "own" && !refused && reply.status < 500;
          if (!ownAnswer && (allowed === refused || reply.status === 401 || reply.status >= 500)) {
            wrong.push(`${operation.method} ${url} as ${role} (${operation.access}): ${reply.status}`);
          }
          // HEAD, which fastify adds to every GET, asks the GET's role (a stream's HEAD stays open).
          if (operation.method === "GET" && !operation.path.endsWith("/stream")) {
            const head = await call("HEAD", target, tokens.get(role));
            if ((head.status === 403) !== refused || head.status === 401 || head.status >= 500) {
              wrong.push(`HEAD ${url} as ${role} (${operation.access}): ${head.status}, GET ${reply.status}`);
            }
          }
          if (refused) {
            expect((reply.body as { error: { message: string; hint: string } }).error).toMatchObject({
              message: expect.stringContaining(`needs the ${operation.access} role`),
              hint: expect.stringContaining("agentd token create"),
            });
          }
        }
        const anonymous = await call(
          operation.method,
          url,
          undefined,
          operation.method === "POST" ? {} : undefined,
        );
        const tokenFree = operation.access === "public" || operation.access === "own";
        // Its own 401 (no signature here) is no sign that it wanted the API token.
        const ownRefusal = operation.access === "own" && anonymous.status === 401;
        if (tokenFree === (anonymous.status === 401) && !ownRefusal && !(operation.path === "/auth/login")) {
          wrong.push(`${operation.method} ${url} without a token (${operation.access}): ${anonymous.status}`);
        }
      }
      // The routes the document leaves out are public: the dashboard's page and files, the
      // document and its explorer; no role stands in front of them, nor any token.
      for (const hidden of ["/", "/ui/app.js", "/openapi.json", "/docs"]) {
        const reply = await call("GET", hidden, undefined);
        if (reply.status === 401 || reply.status === 403)
          wrong.push(`GET ${hidden} without a token: ${reply.status}`);
      }
      // No route answers OPTIONS (no CORS preflight is ever granted): an unknown method needs a token.
      expect((await call("OPTIONS", "/runs", tokens.get("read"))).status).toBe(404);
      expect((await call("OPTIONS", "/runs", undefined)).status).toBe(401);
      expect(wrong).toEqual([]);
      expect(table.length).toBeGreaterThan(15);
    },
  );

  it(
    "creates, lists and revokes tokens on the running daemon without a restart; the old token stays admin",
    { timeout: 180_000 },
    async () => {
      const token = await createToken("ci", "run");
      expect((await call("GET", "/runs", token)).status).toBe(200);
      expect((await call("GET", "/audit", token)).status).toBe(403);

      // Three CLI calls that change nothing (a refused create changes nothing), at once: each CLI
      // process costs a second or more on a loaded machine.
      const [listed, listedAsRun, again] = await Promise.all([
        agentd(["token", "list"]),
        agentd(["token", "list"], token),
        agentd(["token", "create", "--name", "ci", "--role", "read"]),
      ]);
      expect(listed.exitCode, listed.stderr).toBe(0);
      expect(listed.stdout).toMatch(/^ci\s+run\s/m);
      expect(listed.stdout).toMatch(/^default\s+admin\s/m);
      expect(listed.stdout).not.toContain(token);
      expect(listedAsRun.stderr).toContain("FORBIDDEN_ROLE");
      expect(again.exitCode).not.toBe(0);
      expect(again.stderr).toContain("CONFLICT");

      const revoked = await agentd(["token", "revoke", "ci"]);
      expect(revoked.exitCode, revoked.stderr).toBe(0);
      expect(revoked.stdout).toContain("revoked ci");
      const refused = await call("GET", "/runs", token);
      expect(refused.status).toBe(401);
      expect(refused.body).toMatchObject({ error: { code: "UNAUTHORIZED" } });
      expect((await agentd(["token", "revoke", "ci"])).stderr).toContain("NOT_FOUND");

      // The daemon's own token (data_dir/api.token) is admin.
      expect((await call("GET", "/audit", scripted.daemon.token)).status).toBe(200);
      expect((await call("GET", "/auth/session", scripted.daemon.token)).body).toMatchObject({
        role: "admin",
        actor: { kind: "token", name: "default" },
      });
      // Only the hash is stored.
      const stored = readFileSync(path.join(scripted.project.dataDirectory, "tokens.json"), "utf8");
      expect(stored).not.toContain(token);
      expect(stored).not.toContain(token.slice("agentd_".length));
    },
  );

  it(
    "logs a browser in with a named token at its role, and ends the session when the token is revoked",
    { timeout: 120_000 },
    async () => {
      const token = await apiToken("viewer", "read");
      const login = await call("GET", `/auth/login?token=${encodeURIComponent(token)}`, undefined);
      expect(login.status).toBe(303);
      const cookie = (login.headers.get("set-cookie") ?? "").split(";")[0] ?? "";
      const withCookie = (method: string, urlPath: string) =>
        fetch(`${scripted.daemon.url}${urlPath}`, {
          method,
          headers: { cookie, ...(method === "POST" ? { "content-type": "application/json" } : {}) },
        });
      expect(await (await withCookie("GET", "/auth/session")).json()).toMatchObject({
        role: "read",
        actor: { kind: "dashboard", name: "viewer" },
      });
      expect((await withCookie("GET", "/runs")).status).toBe(200);
      expect((await withCookie("POST", "/runs/r_none/stop")).status).toBe(403);
      await revokeWithApi("viewer");
      expect((await withCookie("GET", "/runs")).status).toBe(401);
    },
  );
});

describe("the audit trail", () => {
  it(
    "records every action with its actor, in the audit log and in the run's events",
    { timeout: 240_000 },
    async () => {
      // The starter's token by the CLI (the trail names the CLI as its creator), the approver's by
      // the API: one CLI process fewer, and what the trail says of the approver is its approvals.
      const [runToken, approveToken] = await Promise.all([
        createToken("starter", "run"),
        apiToken("approver", "approve"),
      ]);

      scripted.llm.enqueue(
        toolCallReply({ name: "write_file", arguments: { path: "a.md", content: "text" } }),
      );
      scripted.llm.enqueue(textReply("written"));
      const started = await call("POST", "/agents/writer/runs", runToken, { task: "write" });
      expect(started.status).toBe(202);
      const run = (started.body as { run: string }).run;
      const approval = await waitFor(async () => {
        const reply = await call("GET", "/approvals", runToken);
        return (reply.body as { approvals: PendingApproval[] }).approvals.find(
          (pending) => pending.run === run,
        );
      }, "the approval");

      // A run token cannot answer; the approve token cannot stop.
      expect(
        (await call("POST", `/approvals/${approval.id}`, runToken, { decision: "approve" })).status,
      ).toBe(403);
      expect((await call("POST", `/runs/${run}/stop`, approveToken)).status).toBe(403);

      expect((await agentd(["runs"], runToken)).exitCode).toBe(0);
      expect((await call("POST", `/runs/${run}/pause`, runToken)).status).toBe(200);
      await waitFor(
        async () => (await getRun(scripted.daemon, run)).status === "paused" || undefined,
        "paused",
      );
      expect((await call("POST", `/runs/${run}/resume`, runToken)).status).toBe(200);
      const pending = await waitFor(async () => {
        const reply = await call("GET", "/approvals", approveToken);
        return (reply.body as { approvals: PendingApproval[] }).approvals.find((entry) => entry.run === run);
      }, "the approval after the resume");
      expect(
        (await call("POST", `/approvals/${pending.id}`, approveToken, { decision: "approve" })).status,
      ).toBe(200);
      await waitForRunEnd(scripted.daemon, run);

      // A second run stopped with the CLI while it waits; a third denied with the CLI.
      const waitingRun = async (file: string): Promise<{ run: string; approval: string }> => {
        scripted.llm.enqueue(
          toolCallReply({ name: "write_file", arguments: { path: file, content: "text" } }),
        );
        const posted = (await call("POST", "/agents/writer/runs", runToken, { task: "write again" }))
          .body as {
          run: string;
        };
        const waiting = await waitFor(async () => {
          const reply = await call("GET", "/approvals", approveToken);
          return (reply.body as { approvals: PendingApproval[] }).approvals.find(
            (entry) => entry.run === posted.run,
          );
        }, `the approval of ${file}`);
        return { run: posted.run, approval: waiting.id };
      };
      const second = await waitingRun("b.md");
      const stopped = await agentd(["stop", second.run], runToken);
      expect(stopped.exitCode, stopped.stderr).toBe(0);
      await waitForRunEnd(scripted.daemon, second.run);
      const third = await waitingRun("c.md");
      scripted.llm.enqueue(textReply("not written"));
      const denied = await agentd(["deny", third.approval], approveToken);
      expect(denied.exitCode, denied.stderr).toBe(0);
      await waitForRunEnd(scripted.daemon, third.run);

      // A secret changed with the CLI (no daemon involved), and a token revoked.
      // Independent of each other: at once.
      const [secret, revokedStarter] = await Promise.all([
        agentdCli(["--config", scripted.project.configFile, "secrets", "set", "api_key"], {
          input: "a-long-enough-secret-value",
          environment: { AGENTD_VAULT_KEY: VAULT_KEY },
        }),
        agentd(["token", "revoke", "starter"]),
      ]);
      expect(secret.exitCode, secret.stderr).toBe(0);
      expect(revokedStarter.exitCode).toBe(0);

      const trail = await auditTrail();
      const of = (action: string, target?: string) =>
        trail.filter(
          (entry) =>
            entry.action === action &&
            (target === undefined || entry.run === target || entry.target === target),
        );
      expect(of("run.start", run)).toEqual([
        expect.objectContaining({ actor: { kind: "token", name: "starter" }, agent: "writer" }),
      ]);
      expect(of("run.pause", run)).toEqual([
        expect.objectContaining({ actor: { kind: "token", name: "starter" } }),
      ]);
      expect(of("run.resume", run)).toEqual([
        expect.objectContaining({ actor: { kind: "token", name: "starter" } }),
      ]);
      expect(of("approval.approve", run)).toEqual([
        expect.objectContaining({ actor: { kind: "token", name: "approver" }, target: pending.id }),
      ]);
      expect(of("approval.deny", third.run)).toEqual([
        expect.objectContaining({ actor: { kind: "cli", name: "approver" } }),
      ]);
      expect(of("run.stop", second.run)).toEqual([
        expect.objectContaining({ actor: { kind: "cli", name: "starter" } }),
      ]);
      expect(of("secret.set", "api_key")).toEqual([
        expect.objectContaining({ actor: expect.objectContaining({ kind: "cli" }) }),
      ]);
      expect(of("token.create", "starter")).toEqual([
        expect.objectContaining({ actor: { kind: "cli", name: "default" } }),
      ]);
      expect(of("token.revoke", "starter")).toEqual([
        expect.objectContaining({ actor: { kind: "cli", name: "default" } }),
      ]);

      // The run's own events carry the actor too.
      const events = await runEvents(scripted.daemon, run);
      const approved = events.find(
        (event): event is Extract<AgentEvent, { type: "approval" }> =>
          event.type === "approval" && event.data.state === "approved",
      );
      expect(approved?.data.actor).toEqual({ kind: "token", name: "approver" });
      const audits = events.flatMap((event) =>
        event.type === "audit" ? [`${event.data.action} ${event.data.actor.name}`] : [],
      );
      expect(audits).toEqual([
        "run.start starter",
        "run.pause starter",
        "run.resume starter",
        "approval.approve approver",
      ]);

      // Pages: after= the last id gives nothing; a limit of 1 pages through.
      const last = trail.at(-1)?.id ?? "";
      expect(
        ((await call("GET", `/audit?after=${last}`, scripted.daemon.token)).body as { entries: unknown[] })
          .entries,
      ).toEqual([]);
      const first = (await call("GET", "/audit?limit=1", scripted.daemon.token)).body as {
        entries: AuditEntry[];
        next: string;
      };
      expect(first.entries).toHaveLength(1);
      const second2 = (await call("GET", `/audit?limit=1&after=${first.next}`, scripted.daemon.token))
        .body as { entries: AuditEntry[] };
      expect(second2.entries[0]?.id).toBe(trail[1]?.id);
      expect((await call("GET", "/audit?after=zzz", scripted.daemon.token)).status).toBe(400);
      const [printed, refusedAudit] = await Promise.all([agentd(["audit"]), agentd(["audit"], approveToken)]);
      expect(printed.exitCode, printed.stderr).toBe(0);
      expect(printed.stdout).toContain("token:approver");
      expect(refusedAudit.stderr).toContain("FORBIDDEN_ROLE");
    },
  );

  it(
    "never writes a token's value into the logs, the events, the audit trail or the store",
    { timeout: 120_000 },
    async () => {
      const token = await apiToken("secretive", "admin");
      expect((await call("GET", "/runs", token)).status).toBe(200);
      await revokeWithApi("secretive");
      const secretPart = token.slice("agentd_".length);
      const places: string[] = [scripted.daemon.stderr(), scripted.daemon.stdout()];
      const walk = (folder: string) => {
        for (const entry of readdirSync(folder, { withFileTypes: true })) {
          const file = path.join(folder, entry.name);
          if (entry.isDirectory()) walk(file);
          else places.push(readFileSync(file, "latin1"));
        }
      };
      walk(scripted.project.dataDirectory);
      expect(places.filter((text) => text.includes(secretPart))).toEqual([]);
    },
  );
});
