import { createConnection } from "node:net";
import { describe, expect, it } from "vitest";
import type { PendingApproval } from "../../src/approvals/approval-broker.js";
import type { Role } from "../../src/access/role.js";
import { rawRequest } from "../support/raw-http.js";
import { useScriptedDaemon } from "../support/scripted-daemon.js";
import { toolCallReply, textReply } from "../support/scripted-llm-server.js";
import { waitFor } from "../support/wait-for.js";
import { getRun, waitForRunEnd } from "./api-shapes.js";

const scripted = useScriptedDaemon({
  agents: (project) => {
    project.writeAgent("writer", {
      workdir: "work/writer",
      tools: ["write_file"],
      permissions: { ask: ["write_file"] },
    });
  },
});

async function token(name: string, role: Role): Promise<string> {
  const created = await scripted.daemon.request("POST", "/tokens", { name, role });
  expect(created.status).toBe(201);
  return (created.body as { token: string }).token;
}

async function sessionOf(value: string): Promise<string> {
  const login = await fetch(`${scripted.daemon.url}/auth/login?token=${encodeURIComponent(value)}`, {
    redirect: "manual",
  });
  expect(login.status).toBe(303);
  return (login.headers.get("set-cookie") ?? "").split(";")[0] ?? "";
}

/** One request with exactly these header lines (repeated names included), as bytes on a socket. */
function rawLines(path: string, lines: string[]): Promise<string> {
  const url = new URL(scripted.daemon.url);
  return new Promise((resolve, reject) => {
    const socket = createConnection({ host: url.hostname, port: Number(url.port) });
    let text = "";
    socket.on("data", (chunk) => (text += chunk.toString("latin1")));
    socket.on("close", () => resolve(text.split("\r\n")[0] ?? ""));
    socket.on("error", reject);
    socket.write(
      `GET ${path} HTTP/1.1\r\nHost: ${url.host}\r\nConnection: close\r\n${lines.join("\r\n")}\r\n\r\n`,
    );
  });
}

describe("credentials sent together", () => {
  it("are judged by the Authorization header alone, the first of repeated ones, never the best", async () => {
    const reader = await token("mixer", "read");
    const admin = scripted.daemon.token ?? "";
    const adminCookie = await sessionOf(admin);
    expect(await rawLines("/audit", [`Cookie: ${adminCookie}`])).toContain("200");
    expect(await rawLines("/audit", [`Authorization: Bearer ${reader}`, `Cookie: ${adminCookie}`])).toContain(
      "403",
    );
    expect(await rawLines("/audit", ["Authorization: Bearer nope", `Cookie: ${adminCookie}`])).toContain(
      "401",
    );
    expect(
      await rawLines("/audit", [`Authorization: Bearer ${reader}`, `Authorization: Bearer ${admin}`]),
    ).not.toContain("200");
    expect(await rawLines(`${scripted.daemon.url}/audit`, [`Authorization: Bearer ${reader}`])).not.toContain(
      "200",
    );
    const url = new URL(scripted.daemon.url);
    expect(
      (
        await rawRequest(scripted.daemon.url, {
          path: `http://${url.host}/tokens`,
          headers: { host: url.host, authorization: `Bearer ${reader}` },
        })
      ).status,
    ).not.toBe(200);
  });
});

describe("the dashboard's actions", () => {
  it(
    "are audited with the dashboard as actor and the session's token name",
    { timeout: 120_000 },
    async () => {
      const starter = await sessionOf(await token("desk-runner", "run"));
      const approver = await sessionOf(await token("desk-approver", "approve"));
      const asSession = (cookie: string, method: string, path: string, body?: unknown) =>
        fetch(`${scripted.daemon.url}${path}`, {
          method,
          headers: { cookie, ...(body === undefined ? {} : { "content-type": "application/json" }) },
          ...(body === undefined ? {} : { body: JSON.stringify(body) }),
        });
      scripted.llm.enqueue(toolCallReply({ name: "write_file", arguments: { path: "a.md", content: "a" } }));
      scripted.llm.enqueue(textReply("written"));
      const started = await asSession(starter, "POST", "/agents/writer/runs", { task: "write" });
      expect(started.status).toBe(202);
      const { run } = (await started.json()) as { run: string };
      await waitFor(async () => {
        const reply = (await scripted.daemon.request("GET", "/approvals")).body as {
          approvals: PendingApproval[];
        };
        return reply.approvals.find((approval) => approval.run === run);
      }, "the approval");
      expect((await asSession(starter, "POST", `/runs/${run}/pause`)).status).toBe(200);
      await waitFor(
        async () => (await getRun(scripted.daemon, run)).status === "paused" || undefined,
        "paused",
      );
      expect((await asSession(starter, "POST", `/runs/${run}/resume`)).status).toBe(200);
      const again = await waitFor(async () => {
        const reply = (await scripted.daemon.request("GET", "/approvals")).body as {
          approvals: PendingApproval[];
        };
        return reply.approvals.find((approval) => approval.run === run);
      }, "the approval after the resume");
      expect(
        (await asSession(approver, "POST", `/approvals/${again.id}`, { decision: "approve" })).status,
      ).toBe(200);
      await waitForRunEnd(scripted.daemon, run);
      const trail = (await scripted.daemon.request("GET", "/audit?limit=1000")).body as {
        entries: Array<{ action: string; run?: string; actor: { kind: string; name: string } }>;
      };
      const ofRun = trail.entries
        .filter((entry) => entry.run === run)
        .map((entry) => `${entry.action} ${entry.actor.kind}:${entry.actor.name}`);
      expect(ofRun).toEqual([
        "run.start dashboard:desk-runner",
        "run.pause dashboard:desk-runner",
        "run.resume dashboard:desk-runner",
        "approval.approve dashboard:desk-approver",
      ]);
    },
  );
});
