import { once } from "node:events";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { decodeMessage, readProtoFiles } from "./proto-schema.js";

const PROTO_FOLDER = path.join(path.dirname(fileURLToPath(import.meta.url)), "otlp-proto");

/**
 * The OpenTelemetry protocol's own definitions (opentelemetry-proto v1.11.0, Apache-2.0, copied in
 * test/support/otlp-proto): every body is decoded by them, not by the SDK that encoded it.
 */
const SCHEMA = readProtoFiles(
  ["trace_service.proto", "trace.proto", "common.proto", "resource.proto"].map((file) =>
    path.join(PROTO_FOLDER, file),
  ),
);
const REQUEST = "opentelemetry.proto.collector.trace.v1.ExportTraceServiceRequest";

/** One span as received, its attributes flattened to plain values. */
export interface ReceivedSpan {
  traceId: string;
  spanId: string;
  parentSpanId: string;
  name: string;
  kind: number;
  attributes: Record<string, unknown>;
  events: Array<{ name: string; attributes: Record<string, unknown> }>;
  status: { code: number; message: string };
  resource: Record<string, unknown>;
}

/** A local OTLP/HTTP collector: `POST /v1/traces` with protobuf bodies. */
export interface OtlpReceiver {
  /** The base URL (OTEL_EXPORTER_OTLP_ENDPOINT). */
  readonly url: string;
  readonly spans: ReceivedSpan[];
  /** Every request body as received, for a search for values that must never leave. */
  readonly bodies: Buffer[];
  readonly requests: Array<{
    path: string;
    contentType: string | undefined;
    headers: Record<string, unknown>;
  }>;
  /** Resolves once `ready` holds of the spans received (checked at each request), else rejects after `timeoutMs`. */
  waitFor<Value>(ready: (spans: ReceivedSpan[]) => Value | undefined, timeoutMs?: number): Promise<Value>;
  close(): Promise<void>;
}

export async function startOtlpReceiver(): Promise<OtlpReceiver> {
  const spans: ReceivedSpan[] = [];
  const bodies: Buffer[] = [];
  const requests: OtlpReceiver["requests"] = [];
  const waiters = new Set<() => void>();
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on("data", (chunk: Buffer) => chunks.push(chunk));
    request.on("end", () => {
      const body = Buffer.concat(chunks);
      requests.push({
        path: request.url ?? "",
        contentType: request.headers["content-type"],
        headers: request.headers,
      });
      bodies.push(body);
      if (request.url === "/v1/traces" && request.headers["content-type"] === "application/x-protobuf") {
        spans.push(...spansOf(decodeMessage(SCHEMA, REQUEST, body)));
      }
      response.writeHead(200, { "content-type": "application/x-protobuf" });
      response.end();
      for (const waiter of waiters) waiter();
    });
  });
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    spans,
    bodies,
    requests,
    waitFor: (ready, timeoutMs = 20_000) =>
      new Promise((resolve, reject) => {
        const check = () => {
          const value = ready(spans);
          if (value === undefined) return;
          waiters.delete(check);
          clearTimeout(timer);
          resolve(value);
        };
        const timer = setTimeout(() => {
          waiters.delete(check);
          reject(
            new Error(`the spans expected did not arrive; got: ${spans.map((span) => span.name).join(", ")}`),
          );
        }, timeoutMs);
        waiters.add(check);
        check();
      }),
    close: async () => {
      server.closeAllConnections();
      server.close();
      await once(server, "close");
    },
  };
}

type Decoded = Record<string, unknown>;
const list = (value: unknown): Decoded[] => (Array.isArray(value) ? (value as Decoded[]) : []);

function spansOf(request: Decoded): ReceivedSpan[] {
  return list(request.resource_spans).flatMap((resourceSpans) => {
    const resource = attributesOf((resourceSpans.resource as Decoded | undefined)?.attributes);
    return list(resourceSpans.scope_spans).flatMap((scopeSpans) =>
      list(scopeSpans.spans).map((span) => ({
        traceId: String(span.trace_id ?? ""),
        spanId: String(span.span_id ?? ""),
        parentSpanId: String(span.parent_span_id ?? ""),
        name: String(span.name ?? ""),
        kind: Number(span.kind ?? 0),
        attributes: attributesOf(span.attributes),
        events: list(span.events).map((event) => ({
          name: String(event.name ?? ""),
          attributes: attributesOf(event.attributes),
        })),
        status: {
          code: Number((span.status as Decoded | undefined)?.code ?? 0),
          message: String((span.status as Decoded | undefined)?.message ?? ""),
        },
        resource,
      })),
    );
  });
}

function attributesOf(keyValues: unknown): Record<string, unknown> {
  return Object.fromEntries(
    list(keyValues).map((pair) => [String(pair.key), valueOf(pair.value as Decoded)]),
  );
}

function valueOf(value: Decoded | undefined): unknown {
  if (value === undefined) return undefined;
  if ("string_value" in value) return value.string_value;
  if ("bool_value" in value) return value.bool_value;
  if ("int_value" in value) return Number(value.int_value);
  if ("double_value" in value) return value.double_value;
  if ("array_value" in value) return list((value.array_value as Decoded).values).map(valueOf);
  return undefined;
}
