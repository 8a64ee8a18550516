import { type Server, createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { ConfigSchema } from "../../src/config/config-schema.js";
import { EventBus } from "../../src/events/event-bus.js";
import { createLogger } from "../../src/logging/logger.js";
import { McpToolSource } from "../../src/mcp/mcp-tool-source.js";
import { RunControl } from "../../src/run-vocabulary/run-control.js";
import { newRunRecord } from "../../src/runs/record/new-run-record.js";
import { SecretRedactor } from "../../src/secrets/secret-redactor.js";
import { openCoreTraces, tracedTools } from "../../src/telemetry/core-traces.js";
import { builtinTools } from "../../src/tools/builtin/builtin-tools.js";
import { DefaultToolExecutor } from "../../src/tools/default-tool-executor.js";
import { CompositeToolCatalog } from "../../src/tools/tool-catalog.js";
import { defineTool } from "../../src/tools/tool-definition.js";
import { EnvVault } from "../../src/vault/env-vault.js";
import { makeDefinition } from "../support/make-definition.js";
import { testSandboxHost } from "../support/test-sandbox.js";
import { fixtureServer } from "../mcp/mcp-test-kit.js";
import { KeptSpans } from "../support/kept-spans.js";

/** A tool that throws: the executor logs "tool failed" inside the call. */
const breaking = defineTool({
  name: "breaks",
  description: "Throws",
  schema: z.object({}),
  subject: () => ({ kind: "texts", texts: [] }),
  run: () => Promise.reject(new Error("broken on purpose")),
});

let server: Server;
let base: string;
const seenTraceparents: Array<string | undefined> = [];

beforeAll(async () => {
  server = createServer((incoming, response) => {
    seenTraceparents.push(incoming.headers.traceparent as string | undefined);
    response.writeHead(200, { "content-type": "text/plain" });
    response.end("ok");
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

describe("a traced tool call's context", () => {
  it(
    "reaches http_request and MCP as traceparent, and its log lines as span_id",
    { timeout: 60_000 },
    async () => {
      const config = ConfigSchema.parse({
        mcp_servers: { fixture: fixtureServer() },
        telemetry: { traces: { endpoint: "http://127.0.0.1:9" } },
      });
      const kept = new KeptSpans();
      const traces = await openCoreTraces({
        settings: config.telemetry,
        redact: (text) => text,
        exporter: kept,
      });
      const runs = traces.runs;
      if (runs === undefined) throw new Error("traces should be on");
      const lines: string[] = [];
      const logger = createLogger({
        level: "info",
        pretty: false,
        destination: { write: (line: string) => lines.push(line) } as unknown as NodeJS.WritableStream,
        mixin: traces.logFields,
      });
      const sandbox = testSandboxHost(tmpdir());
      const source = McpToolSource.fromConfig(config, sandbox, logger);
      const executor = tracedTools(
        new DefaultToolExecutor({
          catalog: new CompositeToolCatalog([...builtinTools(), breaking], [source]),
          approvals: { request: async () => ({ approved: false, state: "denied", scope: "once" }) },
          vault: new EnvVault({}),
          redactor: new SecretRedactor(),
          settings: config.tools,
          sandbox,
          logger,
        }),
        runs,
      );
      const definition = makeDefinition({
        frontmatter: {
          tools: ["http_request", "breaks", "mcp:fixture/meta"],
          permissions: { allow: ["http_request", "breaks", "mcp:fixture/meta"] },
          sandbox: { network: [new URL(base).host] },
        },
      });
      const runId = "r_context";
      const record = runs.stampNewRun(
        newRunRecord({
          id: runId,
          agent: definition.id,
          task: "call",
          trigger: { kind: "api" },
          definition,
          createdAt: new Date(0),
        }),
      );
      const control = new RunControl();
      const bus = new EventBus();
      try {
        const outputs = await runs.run({ runId, definition, events: bus, control }, async ({ events }) => {
          const call = (callId: string, tool: string, input: unknown) =>
            executor.execute(
              { callId, tool, argumentsJson: JSON.stringify(input) },
              { runId, definition, control, events, setStatus: () => undefined },
            );
          return [
            await call("call_http", "http_request", { method: "GET", url: `${base}/` }),
            await call("call_mcp", "mcp__fixture__meta", {}),
            await call("call_breaks", "breaks", {}),
          ];
        });
        expect(outputs.map((output) => output.ok)).toEqual([true, true, false]);
        runs.onEvent({
          id: 1,
          agent: definition.id,
          run: runId,
          type: "status",
          time: new Date(0).toISOString(),
          data: { status: "completed" },
        } as Parameters<typeof runs.onEvent>[0]);
        await traces.flush();
        const spanOf = (callId: string) => {
          const span = kept.spans.find((kept) => kept.attributes["gen_ai.tool.call.id"] === callId);
          if (span === undefined) throw new Error(`no span for ${callId}`);
          expect(span.spanContext().traceId).toBe(record.trace_id);
          return span.spanContext();
        };
        const traceparent = (callId: string) => `00-${record.trace_id}-${spanOf(callId).spanId}-01`;
        expect(seenTraceparents).toEqual([traceparent("call_http")]);
        expect(JSON.parse(outputs[1]?.output ?? "{}")).toMatchObject({
          traceparent: traceparent("call_mcp"),
        });
        const failed = lines
          .map((line) => JSON.parse(line) as Record<string, unknown>)
          .find((line) => line.msg === "tool failed");
        expect(failed).toMatchObject({
          run: runId,
          trace_id: record.trace_id,
          span_id: spanOf("call_breaks").spanId,
        });
      } finally {
        control.dispose();
        await source.close();
        await traces.shutdown();
      }
    },
  );
});
