import { readFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import type { RunRecord } from "../../src/run-vocabulary/run-record.js";
import { agentd } from "../support/agentd-cli.js";
import { type OtlpReceiver, type ReceivedSpan, startOtlpReceiver } from "../support/otlp-receiver.js";
import { type RecordedRequest, textReply, toolCallReply } from "../support/scripted-llm-server.js";
import { expectResumedInTrace } from "../support/resumed-trace.js";
import { writeOneFileThenHang } from "../support/write-then-hang.js";
import { useTestKit } from "../support/test-kit.js";
import { waitFor } from "../support/wait-for.js";
import { getRun, waitForRunEnd } from "../daemon/api-shapes.js";

const FAKE_CLAUDE = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../fixtures/cli/claude");
const SECRET = "tok-Trace-6f2a91c4e8";
/** The parent a caller names when it starts a run. */
const CALLER_TRACE = "4bf92f3577b34da6a3ce929d0e0e4736";
const CALLER_SPAN = "00f067aa0ba902b7";
/** A caller's trace that it did not sample (flags 00). */
const UNSAMPLED_TRACE = "5c0a3f4e6b7d8e9f0a1b2c3d4e5f6a7b";

const kit = useTestKit();

/** The lead's model: one tool call per round (each kind of outcome), then an answer that leaks the secret. */
function reply(request: RecordedRequest) {
  const tools = (request.body?.tools ?? []).map((tool) => tool.function.name);
  if (!tools.includes("agent__helper")) return textReply("helped");
  const round = (request.body?.messages ?? []).filter((message) => message.role === "tool").length;
  const usage = { usage: { promptTokens: 40 + round, completionTokens: 7 } };
  switch (round) {
    case 0:
      return toolCallReply(
        { name: "shell", arguments: { command: "echo {{secret:token}}" }, id: "call_shell" },
        usage,
      );
    case 1:
      return toolCallReply({ name: "read_file", arguments: { path: "notes.md" }, id: "call_denied" }, usage);
    case 2:
      return toolCallReply(
        { name: "write_file", arguments: { path: "out.md", content: "ok" }, id: "call_asked" },
        usage,
      );
    case 3:
      return toolCallReply({ name: "agent__helper", arguments: { task: "help" }, id: "call_helper" }, usage);
    default:
      return textReply(`done; the token was ${SECRET}`, usage);
  }
}

const byName = (spans: ReceivedSpan[], name: string) => spans.filter((span) => span.name === name);
const one = (spans: ReceivedSpan[], name: string): ReceivedSpan => {
  const found = byName(spans, name);
  if (found.length !== 1) throw new Error(`${found.length} spans named ${name}`);
  return found[0] as ReceivedSpan;
};

describe("a run's trace", () => {
  it(
    "exports the GenAI span tree of runs with tools, a denial, an approval, a sub-agent and a CLI worker",
    { timeout: 120_000 },
    async () => {
      const receiver: OtlpReceiver = await startOtlpReceiver();
      kit.defer(() => receiver.close());
      const { llm, project } = await kit.scriptedProject(reply, {
        config: {
          telemetry: {
            traces: {
              endpoint: receiver.url,
              content: true,
              trace_url: "https://tempo.example/t/{trace_id}",
            },
          },
          log: { level: "debug", pretty: false },
          cli_tools: {
            claude: { command: FAKE_CLAUDE, env: { FAKE_CLI_ARGS_FILE: path.join("work-cli", "seen.json") } },
          },
        },
      });
      void llm;
      const set = await agentd(["secrets", "set", "token"], { cwd: project.root, input: SECRET });
      expect(set.exitCode, set.stderr).toBe(0);
      project.writeAgent("lead", {
        tools: ["shell", "read_file", "write_file"],
        agents: ["helper"],
        secrets: ["token"],
        permissions: { allow: ["shell"], deny: ["read_file"], ask: ["write_file"] },
        workdir: "./work-lead",
        // A hook gets the tool call's span as TRACEPARENT.
        hooks: {
          before_tool: { command: 'printf "%s" "$TRACEPARENT" > hook-traceparent.txt', tools: ["shell"] },
        },
      });
      project.writeAgent("helper", { description: "Helps" });
      const cliWorkdir = path.join(project.root, "work-cli");
      project.writeAgent("coder", {
        worker: "cli",
        cli: { tool: "claude", fallback: "none" },
        workdir: "./work-cli",
      });
      // The fake records its environment in its workdir (the one place its sandbox lets it write).
      const config = readFileSync(project.configFile, "utf8").replace(
        path.join("work-cli", "seen.json"),
        path.join(cliWorkdir, "seen.json"),
      );
      const { writeFileSync } = await import("node:fs");
      writeFileSync(project.configFile, config);
      const daemon = await kit.daemon(project.configFile, { environment: { OTEL_BSP_SCHEDULE_DELAY: "50" } });

      const started = await fetch(`${daemon.url}/agents/lead/runs`, {
        method: "POST",
        headers: {
          ...daemon.headers(),
          "content-type": "application/json",
          traceparent: `00-${CALLER_TRACE}-${CALLER_SPAN}-01`,
        },
        body: JSON.stringify({ task: `check the token ${SECRET}` }),
      });
      expect(started.status).toBe(202);
      const { run, trace_id } = (await started.json()) as { run: string; trace_id: string };
      expect(trace_id).toBe(CALLER_TRACE);
      const approval = await waitFor(async () => {
        const body = (await daemon.request("GET", "/approvals")).body as {
          approvals: Array<{ id: string; run: string }>;
        };
        return body.approvals.find((pending) => pending.run === run);
      }, "the write_file call to wait for approval");
      await daemon.request("POST", `/approvals/${approval.id}`, { decision: "approve" });
      expect(await waitForRunEnd(daemon, run)).toMatchObject({ status: "completed", trace_id: CALLER_TRACE });

      const cliStart = await daemon.request("POST", "/agents/coder/runs", { task: "tidy up" });
      const cliRun = (cliStart.body as { run: string }).run;
      const cliRecord: RunRecord = await waitForRunEnd(daemon, cliRun);
      expect(cliRecord.status, JSON.stringify(cliRecord)).toBe("completed");

      const spans = await receiver.waitFor((received) => {
        const ends = received.filter(
          (span) => span.name === "invoke_agent lead" || span.name === "invoke_agent coder",
        );
        return ends.length === 2 ? received : undefined;
      });
      const lead = one(spans, "invoke_agent lead");
      expect(lead).toMatchObject({
        traceId: CALLER_TRACE,
        parentSpanId: CALLER_SPAN,
        attributes: {
          "gen_ai.operation.name": "invoke_agent",
          "gen_ai.agent.id": "lead",
          "gen_ai.agent.name": "lead",
          "agentd.run.id": run,
          "agentd.run.trigger": "api",
          "agentd.run.status": "completed",
        },
        resource: { "service.name": "agentd" },
      });
      const inLead = spans.filter((span) => span.traceId === CALLER_TRACE);
      const chats = inLead.filter(
        (span) => span.parentSpanId === lead.spanId && span.name.startsWith("chat "),
      );
      expect(chats).toHaveLength(5);
      expect(chats[0]?.attributes).toMatchObject({
        "gen_ai.operation.name": "chat",
        "gen_ai.request.model": expect.any(String),
        "gen_ai.usage.input_tokens": expect.any(Number),
        "gen_ai.usage.output_tokens": 7,
        "gen_ai.response.finish_reasons": ["tool_calls"],
        "gen_ai.conversation.id": run,
      });

      const tool = (name: string) => {
        const span = one(inLead, `execute_tool ${name}`);
        expect(span.parentSpanId).toBe(lead.spanId);
        return span;
      };
      expect(tool("shell").attributes).toMatchObject({
        "gen_ai.operation.name": "execute_tool",
        "gen_ai.tool.name": "shell",
        "gen_ai.tool.call.id": "call_shell",
        "agentd.tool.outcome": "ok",
      });
      const shellSpan = tool("shell");
      expect(shellSpan.events.map((event) => event.name)).toEqual(["agentd.hook.ok"]);
      expect(readFileSync(path.join(project.root, "work-lead", "hook-traceparent.txt"), "utf8")).toBe(
        `00-${CALLER_TRACE}-${shellSpan.spanId}-01`,
      );
      expect(tool("read_file")).toMatchObject({
        attributes: { "agentd.tool.outcome": "denied", "error.type": "TOOL_DENIED" },
        status: { code: 2 },
      });
      const asked = tool("write_file");
      expect(asked.attributes["agentd.tool.outcome"]).toBe("ok");
      expect(asked.events.map((event) => event.name)).toEqual([
        "agentd.approval.requested",
        "agentd.approval.approved",
      ]);
      expect(asked.events[1]?.attributes["agentd.approval.wait_ms"]).toEqual(expect.any(Number));

      // The sub-agent's run is a child of the tool call that started it.
      const helperCall = tool("agent__helper");
      const helper = one(inLead, "invoke_agent helper");
      expect(helper.parentSpanId).toBe(helperCall.spanId);
      expect(helper.attributes).toMatchObject({ "agentd.run.trigger": "agent", "agentd.run.parent_id": run });
      expect(
        inLead.some((span) => span.parentSpanId === helper.spanId && span.name.startsWith("chat ")),
      ).toBe(true);

      // The CLI worker: its process is a span under the run's, and it was handed that span.
      const coder = one(spans, "invoke_agent coder");
      expect(cliRecord.trace_id).toBe(coder.traceId);
      const claude = one(spans, "invoke_agent claude");
      expect(claude).toMatchObject({ traceId: coder.traceId, parentSpanId: coder.spanId });
      expect(claude.attributes).toMatchObject({ "agentd.cli.tool": "claude" });
      const seen = JSON.parse(readFileSync(path.join(cliWorkdir, "seen.json"), "utf8")) as {
        environment: Record<string, string>;
      };
      expect(seen.environment.TRACEPARENT).toBe(`00-${claude.traceId}-${claude.spanId}-01`);
      const bash = one(spans, "execute_tool Bash");
      expect(bash).toMatchObject({
        parentSpanId: claude.spanId,
        attributes: { "agentd.tool.outcome": "ok" },
      });

      // Content was on: the task and the answer are there, the secret value in none of them.
      expect(lead.attributes["agentd.run.task"]).toBe("check the token [secret:token]");
      expect(String(chats[4]?.attributes["gen_ai.output.messages"])).toContain(
        "the token was [secret:token]",
      );
      const bodies = Buffer.concat(receiver.bodies);
      for (const form of [SECRET, Buffer.from(SECRET).toString("base64")])
        expect(bodies.includes(form)).toBe(false);
      expect(JSON.stringify(spans)).not.toContain(SECRET);

      // The daemon's log lines about the run carry its trace id.
      const lines = daemon
        .stderr()
        .split("\n")
        .filter((line) => line.includes(cliRun));
      expect(lines.some((line) => line.includes(`"trace_id":"${coder.traceId}"`))).toBe(true);
      expect(await getRun(daemon, run)).toMatchObject({
        trace_id: CALLER_TRACE,
        trace_url: `https://tempo.example/t/${CALLER_TRACE}`,
      });
    },
  );

  it(
    "continues a run resumed after a restart in its trace, under the run's first span, sampled or not as it was",
    { timeout: 120_000 },
    async () => {
      const receiver: OtlpReceiver = await startOtlpReceiver();
      kit.defer(() => receiver.close());
      // Round 1 writes a file; round 2 never answers until the daemon is gone.
      const { llm, project } = await kit.scriptedProject(writeOneFileThenHang, {
        // A stop does not wait for the hanging model call.
        config: { telemetry: { traces: { endpoint: receiver.url } }, shutdown: { grace: 100 } },
      });
      // One run per agent at a time: the unsampled run is another agent's.
      for (const name of ["steady", "quiet"])
        project.writeAgent(name, {
          resume: true,
          workdir: "./work",
          tools: ["write_file"],
          permissions: { allow: ["write_file"] },
        });
      const environment = { OTEL_BSP_SCHEDULE_DELAY: "50" };
      let daemon = await kit.daemon(project.configFile, { environment });
      const started = await daemon.request("POST", "/agents/steady/runs", {
        task: "write",
      });
      const { run, trace_id } = started.body as { run: string; trace_id: string };
      // A caller that did not sample its trace: the run is in it, and exports nothing, resumed too.
      const unsampledStart = await fetch(`${daemon.url}/agents/quiet/runs`, {
        method: "POST",
        headers: {
          ...daemon.headers(),
          "content-type": "application/json",
          traceparent: `00-${UNSAMPLED_TRACE}-${CALLER_SPAN}-00`,
        },
        body: JSON.stringify({ task: "write" }),
      });
      const unsampled = ((await unsampledStart.json()) as { run: string }).run;
      await llm.waitForChatRequests(4, 30_000);
      expect(await getRun(daemon, unsampled)).toMatchObject({
        trace_id: UNSAMPLED_TRACE,
        trace_sampled: false,
      });
      const first = await getRun(daemon, run);
      expect(first).toMatchObject({ trace_id, span_id: expect.stringMatching(/^[0-9a-f]{16}$/) });
      // A stop exports the run's span as it stands; the restart resumes the run.
      daemon.signal("SIGTERM");
      await daemon.exited;
      const unfinished = await receiver.waitFor((spans) =>
        spans.find((span) => span.name === "invoke_agent steady"),
      );
      expect(unfinished).toMatchObject({
        traceId: trace_id,
        spanId: first.span_id,
        attributes: { "agentd.run.status": expect.stringMatching(/^(stopped|unfinished)$/) },
      });

      llm.setDefaultReply(() => textReply("resumed and done"));
      daemon = await kit.daemon(project.configFile, { environment });
      expect(await waitForRunEnd(daemon, run)).toMatchObject({ status: "completed", trace_id });
      expect(await waitForRunEnd(daemon, unsampled)).toMatchObject({
        status: "completed",
        trace_id: UNSAMPLED_TRACE,
      });
      await expectResumedInTrace(receiver, {
        agent: "steady",
        run,
        traceId: trace_id,
        firstSpanId: first.span_id,
      });
      // The stop flushes every span there is: none of the unsampled run's, before or after the restart.
      daemon.signal("SIGTERM");
      await daemon.exited;
      expect(receiver.spans.filter((span) => span.traceId === UNSAMPLED_TRACE)).toEqual([]);
    },
  );
});
