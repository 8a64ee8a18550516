import { describe, expect, it } from "vitest";
import type { PendingQuestion } from "../../src/questions/question-broker.js";
import { agentd } from "../support/agentd-cli.js";
import {
  type RecordedRequest,
  type ScriptedReplyValue,
  textReply,
  toolCallReply,
} from "../support/scripted-llm-server.js";
import { agentEvents, getRun, runEvents, startRun, waitForRunEnd } from "../daemon/api-shapes.js";
import { useScriptedDaemon } from "../support/scripted-daemon.js";
import { waitFor } from "../support/wait-for.js";

/** Each task asks once, then answers with what the tool said. */
function reply(request: RecordedRequest): ScriptedReplyValue {
  const messages = request.body?.messages ?? [];
  const task = String(messages[1]?.content ?? "");
  const toolResult = messages.find((message) => message.role === "tool");
  if (toolResult) return textReply(`the human said: ${String(toolResult.content)}`);
  const question =
    task === "pick a colour"
      ? { question: "Which colour?", choices: ["red", "blue"] }
      : { question: `About "${task}": go ahead?` };
  return toolCallReply({ name: "ask_human", arguments: question });
}

const scripted = useScriptedDaemon({
  reply,
  agents: (project) => {
    project.writeAgent("asker", { tools: ["ask_human"] });
    project.writeAgent("by-cli", { tools: ["ask_human"] });
    project.writeAgent("hasty", { tools: ["ask_human"], approvals: { timeout: "1s" } });
  },
});

async function pendingQuestion(run: string): Promise<PendingQuestion> {
  return waitFor(async () => {
    const reply = await scripted.daemon.request("GET", "/questions");
    return (reply.body as { questions: PendingQuestion[] }).questions.find(
      (question) => question.run === run,
    );
  }, "a pending question");
}

describe("ask_human", () => {
  it("parks the run in waiting until POST /questions/:id answers; the answer is the observation", async () => {
    const run = await startRun(scripted.daemon, "asker", "pick a colour");
    const question = await pendingQuestion(run);
    expect(question).toMatchObject({
      agent: "asker",
      run,
      question: "Which colour?",
      choices: ["red", "blue"],
    });
    expect(question.id).toMatch(/^q_/);
    expect((await getRun(scripted.daemon, run)).status).toBe("waiting");

    const wrong = await scripted.daemon.request("POST", `/questions/${question.id}`, { answer: "green" });
    expect(wrong.status).toBe(400);
    expect(JSON.stringify(wrong.body)).toContain("not one of the choices");

    const answered = await scripted.daemon.request("POST", `/questions/${question.id}`, { answer: "Blue" });
    expect(answered.status).toBe(200);
    expect(answered.body).toMatchObject({ question: question.id, run, answer: "blue" });
    expect(await waitForRunEnd(scripted.daemon, run)).toMatchObject({
      status: "completed",
      result: "the human said: blue",
    });

    const states = (await agentEvents(scripted.daemon, "asker")).flatMap((event) =>
      event.type === "question" ? [event.data.state] : event.type === "status" ? [event.data.status] : [],
    );
    expect(states).toEqual(["queued", "running", "waiting", "asked", "answered", "running", "completed"]);
    const again = await scripted.daemon.request("POST", `/questions/${question.id}`, { answer: "red" });
    expect(again.status).toBe(404);
    expect(JSON.stringify(again.body)).toContain("QUESTION_NOT_FOUND");
  });

  it("lists questions with agentd questions and answers them with agentd answer", async () => {
    const run = await startRun(scripted.daemon, "by-cli", "ship it");
    const question = await pendingQuestion(run);
    const cli = (...args: string[]) =>
      agentd(args, {
        environment: { AGENTD_URL: scripted.daemon.url, AGENTD_TOKEN: scripted.daemon.token ?? "" },
      });
    const listed = await cli("questions");
    expect(listed.exitCode).toBe(0);
    expect(listed.stdout).toContain(`${question.id}  by-cli  ${run}  About "ship it": go ahead?`);
    const answered = await cli("answer", question.id, "yes, ship it");
    expect(answered.exitCode).toBe(0);
    expect(answered.stdout).toContain(`answered ${question.id}: yes, ship it`);
    expect(await waitForRunEnd(scripted.daemon, run)).toMatchObject({
      status: "completed",
      result: "the human said: yes, ship it",
    });
  }, 60_000);

  it("expires after approvals.timeout and tells the model nobody answered", async () => {
    const run = await startRun(scripted.daemon, "hasty", "hurry");
    expect(await waitForRunEnd(scripted.daemon, run)).toMatchObject({ status: "completed" });
    const events = await runEvents(scripted.daemon, run);
    expect(events.filter((event) => event.type === "question").map((event) => event.data)).toEqual([
      expect.objectContaining({ state: "asked", question: 'About "hurry": go ahead?' }),
      expect.objectContaining({ state: "expired", by: "timeout" }),
    ]);
    const observation = events.find((event) => event.type === "observation");
    expect(observation?.data).toMatchObject({
      tool: "ask_human",
      output: expect.stringContaining("nobody answered"),
    });
  });
});
