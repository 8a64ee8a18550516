import type { Tracer } from "@opentelemetry/api";
import { OTLPTraceExporter } from "@opentelemetry/exporter-trace-otlp-proto";
import { resourceFromAttributes } from "@opentelemetry/resources";
import { BasicTracerProvider, BatchSpanProcessor, type SpanExporter } from "@opentelemetry/sdk-trace-base";
import { packageVersion } from "../util/package-version.js";
import { exportConnections } from "./export-connections.js";
import type { ExportFailures } from "./export-failures.js";
import { type AlreadyMasked, MaskingSpanExporter } from "./masking-exporter.js";
import { defaultSampler } from "./parent-or-record-sampler.js";
import { PooledRandomIds } from "./span-ids.js";
import type { TraceDestination } from "./trace-destination.js";

/** The tracer runs are traced with, and how its spans are flushed at the end. */
export interface TraceExport {
  readonly tracer: Tracer;
  /** Exports what is buffered now and goes on (a bench charges each run its export). Never rejects. */
  flush(): Promise<void>;
  /** Exports what is still buffered and stops; gives up after `boundMilliseconds`. Never rejects. */
  shutdown(boundMilliseconds: number): Promise<void>;
}

/**
 * The official SDK's pipeline: a BasicTracerProvider whose BatchSpanProcessor hands batches to the
 * OTLP/HTTP protobuf exporter, through the masking exporter (which leaves what `alreadyMasked`
 * names as it is). No global provider is registered: the tracer is handed to the run core, so two
 * cores in one process (tests) never mix their spans.
 */
export function createTraceExport(
  destination: TraceDestination,
  redact: (text: string) => string,
  exporter?: SpanExporter,
  alreadyMasked?: AlreadyMasked,
  failures?: ExportFailures,
): TraceExport {
  const connections = exportConnections();
  const sent =
    exporter ??
    new OTLPTraceExporter({
      url: destination.url,
      headers: destination.headers,
      timeoutMillis: destination.exportTimeoutMilliseconds,
      httpAgentOptions: (protocol) => connections.agentFor(protocol),
    });
  const otlp = failures === undefined ? sent : failures.watching(sent);
  // The SDK reads OTEL_TRACES_SAMPLER from the process's environment: so does the choice of ours.
  const sampler = defaultSampler(process.env);
  const provider = new BasicTracerProvider({
    ...(sampler === undefined ? {} : { sampler }),
    resource: resourceFromAttributes({
      ...destination.resourceAttributes,
      "service.name": destination.serviceName,
      "service.version": packageVersion(),
    }),
    // The SDK would cut long strings as they are set, before the exporter masks them: a secret cut
    // in two is no longer a value the masker knows, and its first half would leave as it is. The
    // operator's limit is applied by the masking exporter instead, after the masking.
    spanLimits: { attributeValueLengthLimit: Infinity },
    spanProcessors: [
      new BatchSpanProcessor(
        new MaskingSpanExporter(otlp, redact, alreadyMasked, destination.attributeValueLengthLimit),
      ),
    ],
    idGenerator: new PooledRandomIds(),
  });
  let closing: Promise<void> | undefined;
  return {
    tracer: provider.getTracer("agentd", packageVersion()),
    flush: () => provider.forceFlush().catch(() => undefined),
    shutdown: (boundMilliseconds) =>
      (closing ??= new Promise<void>((resolve) => {
        // The bound is the daemon's stop, not a wait a test could stand in for: a plain timer.
        // Past it, the exports still waiting are cut: their sockets would keep the process alive.
        const timer = setTimeout(() => {
          connections.abandon();
          resolve();
        }, boundMilliseconds);
        timer.unref();
        connections.stopRetrying();
        provider
          .shutdown()
          .catch(() => undefined)
          .finally(() => {
            clearTimeout(timer);
            connections.abandon();
            resolve();
          });
      })),
  };
}
