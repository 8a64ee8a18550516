import { describe, expect, it } from "vitest";
import type { PendingQuestion } from "../../src/questions/question-broker.js";
import { agentd as agentdCli } from "../support/agentd-cli.js";
import { clientCall } from "../support/client-call.js";
import { useScriptedDaemon } from "../support/scripted-daemon.js";
import { type RecordedRequest, textReply, toolCallReply } from "../support/scripted-llm-server.js";
import { waitFor } from "../support/wait-for.js";
import { startRun, waitForRunEnd } from "../daemon/api-shapes.js";

/** Asks once, then ends with what the human said. */
function reply(request: RecordedRequest) {
  const answered = (request.body?.messages ?? []).find((message) => message.role === "tool");
  if (answered) return textReply(`the human said: ${String(answered.content)}`);
  return toolCallReply({ name: "ask_human", arguments: { question: "Ship it?" } });
}

const scripted = useScriptedDaemon({
  reply,
  agents: (project) => {
    project.writeAgent("asker", { tools: ["ask_human"] });
    project.writeAgent("noter", { memory: "write" });
  },
});

interface AuditEntry {
  actor: { kind: string; name: string };
  action: string;
  agent?: string;
  run?: string;
  target?: string;
  details?: Record<string, unknown>;
}

async function createToken(name: string, role: string): Promise<string> {
  const created = await scripted.daemon.request("POST", "/tokens", { name, role });
  expect(created.status).toBe(201);
  return (created.body as { token: string }).token;
}

async function trail(action: string): Promise<AuditEntry[]> {
  const reply = await scripted.daemon.request("GET", "/audit?limit=1000");
  return (reply.body as { entries: AuditEntry[] }).entries.filter((entry) => entry.action === action);
}

function agentd(args: string[], token: string, input?: string) {
  return agentdCli(args, {
    environment: { AGENTD_URL: scripted.daemon.url, AGENTD_TOKEN: token },
    ...(input === undefined ? {} : { input }),
  });
}

describe("the audit trail of answers and memory changes", { timeout: 120_000 }, () => {
  it("records an answer with the approver who gave it, by API and by CLI", async () => {
    const approver = await createToken("answerer", "approve");
    const questionOf = (run: string) =>
      waitFor(async () => {
        const reply = await scripted.daemon.request("GET", "/questions");
        return (reply.body as { questions: PendingQuestion[] }).questions.find((entry) => entry.run === run);
      }, "the question");

    const byApi = await startRun(scripted.daemon, "asker", "first");
    const first = await questionOf(byApi);
    const answered = await clientCall(
      scripted.daemon.url,
      "POST",
      `/questions/${first.id}`,
      { token: approver },
      {
        answer: "yes",
      },
    );
    expect(answered.status).toBe(200);
    await waitForRunEnd(scripted.daemon, byApi);

    const byCli = await startRun(scripted.daemon, "asker", "second");
    const second = await questionOf(byCli);
    const printed = await agentd(["answer", second.id, "no"], approver);
    expect(printed.exitCode, printed.stderr).toBe(0);
    await waitForRunEnd(scripted.daemon, byCli);

    expect(await trail("question.answer")).toEqual([
      expect.objectContaining({ actor: { kind: "token", name: "answerer" }, run: byApi, target: first.id }),
      expect.objectContaining({ actor: { kind: "cli", name: "answerer" }, run: byCli, target: second.id }),
    ]);
  });

  it("records an operator's memory change with its actor and never its text; a refused one not at all", async () => {
    const admin = await createToken("curator", "admin");
    const read = await scripted.daemon.request("GET", "/agents/noter/memory");
    const { version } = read.body as { version: string };
    // A reader may not change it: refused, and nothing recorded.
    const reader = await createToken("onlooker", "read");
    const refused = await clientCall(
      scripted.daemon.url,
      "PUT",
      "/agents/noter/memory",
      { token: reader },
      {
        content: "planted",
        version,
      },
    );
    expect(refused.status).toBe(403);

    const put = await clientCall(
      scripted.daemon.url,
      "PUT",
      "/agents/noter/memory",
      { token: admin },
      {
        content: "the deploy window is Tuesday",
        version,
      },
    );
    expect(put.status).toBe(200);
    const stale = await clientCall(
      scripted.daemon.url,
      "PUT",
      "/agents/noter/memory",
      { token: admin },
      {
        content: "stale",
        version,
      },
    );
    expect(stale.status).toBe(409);
    const set = await agentd(["memory", "noter", "--set", "-"], admin, "the deploy window is Wednesday\n");
    expect(set.exitCode, set.stderr).toBe(0);

    const changes = await trail("memory.change");
    expect(changes).toEqual([
      expect.objectContaining({
        actor: { kind: "token", name: "curator" },
        agent: "noter",
        target: "agent:noter",
      }),
      expect.objectContaining({
        actor: { kind: "cli", name: "curator" },
        agent: "noter",
        target: "agent:noter",
      }),
    ]);
    expect(JSON.stringify(changes)).not.toContain("deploy window");
  });
});
