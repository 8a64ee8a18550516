import { describe, expect, it } from "vitest";
import { agentd } from "../support/agentd-cli.js";
import { type OtlpReceiver, type ReceivedSpan, startOtlpReceiver } from "../support/otlp-receiver.js";
import {
  type RecordedRequest,
  type ScriptedReplyValue,
  textReply,
  toolCallReply,
} from "../support/scripted-llm-server.js";
import { useTestKit } from "../support/test-kit.js";
import { waitFor } from "../support/wait-for.js";
import { waitForRunEnd } from "../daemon/api-shapes.js";

const SECRET = "tok-Retry-93b1c7e2d5";
const kit = useTestKit();

const toolRounds = (request: RecordedRequest) =>
  (request.body?.messages ?? []).filter((message) => message.role === "tool").length;

/**
 * Each agent's model, told apart by its system prompt (the agent's body names it): `flaky` fails
 * once with a 503 whose message repeats the secret, then answers; `primary` always fails, so
 * `backup` answers; `asker` asks for a write twice (one denied, one left to expire) and then asks a
 * person a question.
 */
function reply(request: RecordedRequest): ScriptedReplyValue {
  const model = request.body?.model ?? "";
  const system = JSON.stringify(request.body?.messages?.[0] ?? "");
  if (model === "primary")
    return { type: "http_error", status: 500, message: `primary is down, key ${SECRET}` };
  if (model === "backup") return textReply("backup answered");
  if (system.includes("flaky-agent")) {
    const tries = flakyTries++;
    if (tries === 0) return { type: "http_error", status: 503, message: `overloaded near ${SECRET}` };
    return textReply("done after a retry");
  }
  switch (toolRounds(request)) {
    case 0:
      return toolCallReply({
        name: "write_file",
        arguments: { path: "a.md", content: "a" },
        id: "call_deny",
      });
    case 1:
      return toolCallReply({
        name: "write_file",
        arguments: { path: "b.md", content: "b" },
        id: "call_expire",
      });
    case 2:
      return toolCallReply({
        name: "ask_human",
        arguments: { question: "which colour?" },
        id: "call_question",
      });
    default:
      return textReply("asked everything");
  }
}
let flakyTries = 0;

const one = (spans: ReceivedSpan[], predicate: (span: ReceivedSpan) => boolean, what: string) => {
  const found = spans.filter(predicate);
  if (found.length !== 1) throw new Error(`${found.length} spans: ${what}`);
  return found[0] as ReceivedSpan;
};

describe("a run's trace when the model fails and people answer", () => {
  it(
    "has retry and fallback events on chat spans, and denied, expired and question events on tool spans",
    { timeout: 120_000 },
    async () => {
      const receiver: OtlpReceiver = await startOtlpReceiver();
      kit.defer(() => receiver.close());
      const llm = await kit.scriptedLlm();
      llm.setDefaultReply(reply);
      const project = kit.project({
        config: {
          llm: {
            base_url: llm.url,
            api_key: "test-key",
            model: "scripted",
            retries: { max_attempts: 2, base_delay: 10, max_delay: 20 },
          },
          telemetry: { traces: { endpoint: receiver.url, content: true } },
        },
      });
      const set = await agentd(["secrets", "set", "token"], { cwd: project.root, input: SECRET });
      expect(set.exitCode, set.stderr).toBe(0);
      project.writeAgent(
        "flaky.md",
        "---\ndescription: flaky\nsecrets: [token]\n---\nYou are flaky-agent.\n",
      );
      project.writeAgent(
        "falls.md",
        "---\ndescription: falls\nmodel: primary\nfallback_models: [backup]\nsecrets: [token]\n---\nYou are falls-agent.\n",
      );
      project.writeAgent("asker", {
        tools: ["write_file", "ask_human"],
        permissions: { ask: ["write_file"], allow: ["ask_human"] },
        approvals: { timeout: "1s", on_timeout: "deny" },
        workdir: "./work",
      });
      const daemon = await kit.daemon(project.configFile, { environment: { OTEL_BSP_SCHEDULE_DELAY: "50" } });

      const flaky = (await daemon.request("POST", "/agents/flaky/runs", { task: "go" })).body as {
        run: string;
      };
      const falls = (await daemon.request("POST", "/agents/falls/runs", { task: "go" })).body as {
        run: string;
      };
      const asker = (await daemon.request("POST", "/agents/asker/runs", { task: "go" })).body as {
        run: string;
      };
      const approval = await waitFor(async () => {
        const body = (await daemon.request("GET", "/approvals")).body as {
          approvals: Array<{ id: string; run: string }>;
        };
        return body.approvals.find((pending) => pending.run === asker.run);
      }, "the first write to wait for approval");
      await daemon.request("POST", `/approvals/${approval.id}`, { decision: "deny" });
      const question = await waitFor(async () => {
        const body = (await daemon.request("GET", "/questions")).body as {
          questions: Array<{ id: string; run: string }>;
        };
        return body.questions.find((pending) => pending.run === asker.run);
      }, "the question");
      await daemon.request("POST", `/questions/${question.id}`, { answer: "blue" });
      for (const run of [flaky.run, falls.run, asker.run]) await waitForRunEnd(daemon, run);

      const spans = await receiver.waitFor((received) =>
        received.filter((span) => span.name.startsWith("invoke_agent ")).length === 3 ? received : undefined,
      );
      const runSpan = (agent: string) => one(spans, (span) => span.name === `invoke_agent ${agent}`, agent);
      const chatsOf = (agent: string) =>
        spans.filter((span) => span.parentSpanId === runSpan(agent).spanId && span.name.startsWith("chat "));

      const [retried] = chatsOf("flaky");
      expect(chatsOf("flaky")).toHaveLength(1);
      expect(retried?.events).toEqual([
        {
          name: "agentd.retry",
          attributes: {
            "error.type": expect.any(String),
            "agentd.retry.attempt": 1,
            "agentd.retry.delay_ms": expect.any(Number),
            "gen_ai.request.model": "scripted",
          },
        },
      ]);

      const [fellBack] = chatsOf("falls");
      expect(fellBack).toMatchObject({
        name: "chat primary",
        attributes: { "gen_ai.request.model": "primary", "gen_ai.response.model": "backup" },
      });
      expect(fellBack?.events.map((event) => event.name)).toContain("agentd.fallback");
      expect(runSpan("falls").events.map((event) => event.name)).toContain("agentd.fallback");

      const toolSpan = (id: string) =>
        one(spans, (span) => span.attributes["gen_ai.tool.call.id"] === id, id);
      expect(toolSpan("call_deny")).toMatchObject({
        attributes: { "agentd.tool.outcome": "denied" },
        status: { code: 2 },
      });
      expect(toolSpan("call_deny").events.map((event) => event.name)).toEqual([
        "agentd.approval.requested",
        "agentd.approval.denied",
      ]);
      expect(toolSpan("call_deny").events[1]?.attributes["agentd.approval.wait_ms"]).toEqual(
        expect.any(Number),
      );
      expect(toolSpan("call_expire").events.map((event) => event.name)).toEqual([
        "agentd.approval.requested",
        "agentd.approval.expired",
      ]);
      expect(toolSpan("call_expire").attributes["agentd.tool.outcome"]).toBe("denied");
      expect(toolSpan("call_question").events.map((event) => event.name)).toEqual([
        "agentd.question.asked",
        "agentd.question.answered",
      ]);

      const bodies = Buffer.concat(receiver.bodies);
      for (const form of [SECRET, Buffer.from(SECRET).toString("base64")])
        expect(bodies.includes(form), form).toBe(false);
    },
  );
});
