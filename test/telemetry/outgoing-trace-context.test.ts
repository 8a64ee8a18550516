import { once } from "node:events";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { describe, expect, it } from "vitest";
import { type OtlpReceiver, type ReceivedSpan, startOtlpReceiver } from "../support/otlp-receiver.js";
import { type RecordedRequest, textReply, toolCallReply } from "../support/scripted-llm-server.js";
import { useTestKit } from "../support/test-kit.js";
import { fixtureServer } from "../mcp/mcp-test-kit.js";
import { runEvents, waitForRunEnd } from "../daemon/api-shapes.js";

const kit = useTestKit();
/** A trace context the model writes itself, in a header spelled its own way. */
const CALLER_TRACE = "4bf92f3577b34da6a3ce929d0e0e4736";
const MODEL_TRACEPARENT = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01";

describe("trace context a traced run passes on", () => {
  it(
    "reaches http_request as traceparent (a model's own Traceparent kept) and MCP calls as _meta.traceparent",
    { timeout: 120_000 },
    async () => {
      const receiver: OtlpReceiver = await startOtlpReceiver();
      kit.defer(() => receiver.close());
      const seen: Array<Record<string, string | string[] | undefined>> = [];
      const echo = createServer((request, response) => {
        seen.push(request.headers);
        response.writeHead(200, { "content-type": "text/plain" }).end("ok");
      });
      echo.listen(0, "127.0.0.1");
      await once(echo, "listening");
      kit.defer(() => new Promise((resolve) => echo.close(resolve)));
      const echoUrl = `http://127.0.0.1:${(echo.address() as AddressInfo).port}/`;
      const reply = (request: RecordedRequest) => {
        const rounds = (request.body?.messages ?? []).filter((message) => message.role === "tool").length;
        if (rounds === 0)
          return toolCallReply({
            name: "http_request",
            arguments: { method: "GET", url: echoUrl },
            id: "h1",
          });
        if (rounds === 1)
          return toolCallReply({
            name: "http_request",
            arguments: { method: "GET", url: echoUrl, headers: { TraceParent: MODEL_TRACEPARENT } },
            id: "h2",
          });
        if (rounds === 2) return toolCallReply({ name: "mcp__fixture__meta", arguments: {}, id: "m1" });
        return textReply("done");
      };
      const { project } = await kit.scriptedProject(reply, {
        config: {
          telemetry: { traces: { endpoint: receiver.url } },
          mcp_servers: { fixture: fixtureServer() },
        },
      });
      project.writeAgent("caller", {
        tools: ["http_request", "mcp:fixture/meta"],
        permissions: { allow: ["http_request", "mcp:fixture/meta"] },
        sandbox: { network: [new URL(echoUrl).host] },
      });
      const daemon = await kit.daemon(project.configFile, { environment: { OTEL_BSP_SCHEDULE_DELAY: "50" } });
      // A caller's trace context, its vendor state included, is the run's parent.
      const started = await fetch(`${daemon.url}/agents/caller/runs`, {
        method: "POST",
        headers: {
          ...daemon.headers(),
          "content-type": "application/json",
          traceparent: `00-${CALLER_TRACE}-00f067aa0ba902b7-01`,
          tracestate: "congo=t61rcWkgMzE,rojo=00f067aa0ba902b7",
        },
        body: JSON.stringify({ task: "call out" }),
      });
      const { run } = (await started.json()) as { run: string };
      expect(await waitForRunEnd(daemon, run), JSON.stringify(await runEvents(daemon, run))).toMatchObject({
        status: "completed",
      });
      const spans = await receiver.waitFor((received) =>
        received.some((span) => span.name === "invoke_agent caller") ? received : undefined,
      );
      const call = (id: string): ReceivedSpan => {
        const found = spans.find((span) => span.attributes["gen_ai.tool.call.id"] === id);
        if (found === undefined) throw new Error(`no span for ${id}`);
        return found;
      };
      const first = call("h1");
      expect(first.traceId).toBe(CALLER_TRACE);
      expect(seen[0]?.traceparent).toBe(`00-${first.traceId}-${first.spanId}-01`);
      expect(seen[0]?.tracestate).toBe("congo=t61rcWkgMzE,rojo=00f067aa0ba902b7");
      // The model's own header, in its own spelling, is the only one sent.
      expect(seen[1]?.traceparent).toBe(MODEL_TRACEPARENT);
      const meta = call("m1");
      expect(meta.attributes).toMatchObject({ "gen_ai.tool.type": "extension", "agentd.tool.outcome": "ok" });
      const events = await runEvents(daemon, run);
      const observation = events.find(
        (event) => event.type === "observation" && JSON.stringify(event.data).includes("traceparent"),
      );
      expect(JSON.stringify(observation?.data)).toContain(`00-${meta.traceId}-${meta.spanId}-01`);
    },
  );
});
