import type { TelemetrySettings } from "../config/telemetry-settings.js";
import type { Logger } from "../logging/logger.js";
import { ExportFailures } from "./export-failures.js";
import { MaskedContent } from "./masked-content.js";
import { type TracedRunContext, RunTraces } from "./run-traces.js";
import type { TraceExport } from "./trace-export.js";
import { traceDestination } from "./trace-destination.js";
import type { SpanExporter } from "@opentelemetry/sdk-trace-base";

/** How long a stop waits for the last spans to be exported. */
export const TRACE_FLUSH_BOUND_MILLISECONDS = 5_000;

/** A core's traces: the run tracer and the export it feeds, or nothing when traces are off. */
export interface CoreTraces {
  /** Undefined when traces are off. */
  readonly runs: RunTraces | undefined;
  /** For the logger: a run's `trace_id` on its lines (undefined when off: no mixin at all). */
  readonly logFields: ((mergeObject: object, level: number, logger: unknown) => object) | undefined;
  /** Logs where traces go, or why they are off when that needs saying. */
  announce(logger: Logger): void;
  /** Exports the spans of runs that ended, now (a bench charges each run its export). Never rejects. */
  flush(): Promise<void>;
  /** Ends the spans of runs still open and exports what is buffered, within `boundMilliseconds`. */
  shutdown(boundMilliseconds?: number): Promise<void>;
}

/**
 * Traces for a core when config `telemetry.traces` or the `OTEL_*` variables ask for them (nothing
 * of the SDK is loaded otherwise). `redact` masks every exported string (the vault's redactor).
 */
export async function openCoreTraces(options: {
  settings: TelemetrySettings;
  redact: (text: string) => string;
  /** How many forms the vault knows (it grows with each secret learned): masked content is masked again then. */
  secretsKnown?: () => number;
  environment?: NodeJS.ProcessEnv;
  /** Tests and benches: where spans go instead of OTLP. */
  exporter?: SpanExporter;
}): Promise<CoreTraces> {
  const destination = traceDestination(options.settings, options.environment);
  if ("off" in destination) {
    return {
      runs: undefined,
      logFields: undefined,
      announce: (logger) => destination.warning && logger.warn(destination.warning),
      flush: () => Promise.resolve(),
      shutdown: () => Promise.resolve(),
    };
  }
  // The SDK and its OTLP exporter are loaded only when traces are on: most starts never need them.
  const { createTraceExport } = await import("./trace-export.js");
  // Content on: a chat span's conversation is masked message by message where it is recorded.
  const content = destination.content ? new MaskedContent(options.redact, options.secretsKnown) : undefined;
  const failures = new ExportFailures();
  const exported: TraceExport = createTraceExport(
    destination,
    options.redact,
    options.exporter,
    content && ((span, key, value) => content.isMasked(span, key, value)),
    failures,
  );
  const runs = new RunTraces({
    tracer: exported.tracer,
    content: destination.content,
    maskedContent: content,
  });
  return {
    runs,
    logFields: runs.logFields,
    announce: (logger) => {
      failures.attach(logger);
      logger.info(
        {
          endpoint: withoutPassword(destination.url),
          service: destination.serviceName,
          content: destination.content,
        },
        "exporting traces",
      );
    },
    flush: () => exported.flush(),
    shutdown: (boundMilliseconds = TRACE_FLUSH_BOUND_MILLISECONDS) => {
      runs.endOpenRuns();
      return exported.shutdown(boundMilliseconds);
    },
  };
}

/** Each definition's worker, run inside its run's span. */
export function tracedWorkerFor<Definition, Context extends TracedRunContext, Outcome>(
  workerFor: (definition: Definition) => { run(context: Context): Promise<Outcome> },
  traces: RunTraces,
): (definition: Definition) => { run(context: Context): Promise<Outcome> } {
  return (definition) => {
    const worker = workerFor(definition);
    return { run: (context) => traces.run(context, (traced) => worker.run(traced)) };
  };
}

/**
 * A tool executor whose calls are `execute_tool` spans (the ToolExecutor, structurally): each call
 * is handed the signal (`signal` in its scope) by which what it does finds its span.
 */
export function tracedTools<
  Definition,
  Spec,
  Call extends { callId: string; tool: string; argumentsJson: string },
  Scope extends { runId: string; control: { signal: AbortSignal }; signal?: AbortSignal },
  Result extends { ok: boolean; output: string; code?: string },
>(
  tools: {
    specs(definition: Definition, signal?: AbortSignal): Promise<Spec[]>;
    execute(call: Call, scope: Scope): Promise<Result>;
  },
  traces: RunTraces,
): {
  specs(definition: Definition, signal?: AbortSignal): Promise<Spec[]>;
  execute(call: Call, scope: Scope): Promise<Result>;
} {
  return {
    specs: (definition, signal) => tools.specs(definition, signal),
    execute: (call, scope) =>
      traces.executeTool(call, scope.runId, scope.control.signal, (signal) =>
        tools.execute(call, signal === undefined ? scope : { ...scope, signal }),
      ),
  };
}

/**
 * The collector's URL as the log may show it: a password in it (from OTEL_EXPORTER_OTLP_ENDPOINT,
 * which the vault's masker does not know, unlike config's) is left out.
 */
function withoutPassword(url: string): string {
  const parsed = new URL(url);
  if (parsed.password === "") return url;
  parsed.password = "***";
  return parsed.toString();
}
