import type { TelemetrySettings } from "../config/telemetry-settings.js";

/** Where and how spans are exported, once config and the `OTEL_*` variables are read. */
export interface TraceDestination {
  /** The full OTLP/HTTP traces URL (`…/v1/traces`). */
  url: string;
  headers: Record<string, string>;
  serviceName: string;
  /** Extra resource attributes (OTEL_RESOURCE_ATTRIBUTES). */
  resourceAttributes: Record<string, string>;
  /** Prompt, completion and tool content in spans (masked). */
  content: boolean;
  /** Milliseconds one export may take (OTEL_EXPORTER_OTLP_TIMEOUT; default 10 s). */
  exportTimeoutMilliseconds: number;
  /**
   * Characters an attribute's string may keep (OTEL_SPAN_ATTRIBUTE_VALUE_LENGTH_LIMIT, else
   * OTEL_ATTRIBUTE_VALUE_LENGTH_LIMIT): applied after masking, never before (see MaskingSpanExporter).
   */
  attributeValueLengthLimit?: number;
}

/** Traces off, and why (a reason worth a log line, or none when simply not asked for). */
export interface TracesOff {
  off: true;
  warning?: string;
}

const DEFAULT_COLLECTOR = "http://localhost:4318";
const TRACES_PATH = "/v1/traces";

/**
 * Reads where traces go: config `telemetry.traces` first, field by field, then the standard
 * variables (OTEL_EXPORTER_OTLP_TRACES_ENDPOINT used as is, OTEL_EXPORTER_OTLP_ENDPOINT with
 * `/v1/traces` added, OTEL_TRACES_EXPORTER=otlp alone meaning the default local collector;
 * OTEL_EXPORTER_OTLP_[TRACES_]HEADERS, OTEL_SERVICE_NAME, OTEL_RESOURCE_ATTRIBUTES). Off unless one
 * of them names a destination; OTEL_SDK_DISABLED=true or OTEL_TRACES_EXPORTER=none turn it off
 * whatever config says; a gRPC protocol in the variables is not offered and turns it off too.
 */
export function traceDestination(
  settings: TelemetrySettings,
  environment: NodeJS.ProcessEnv = process.env,
): TraceDestination | TracesOff {
  const variable = (name: string) => {
    const value = environment[name]?.trim();
    return value === undefined || value === "" ? undefined : value;
  };
  if (variable("OTEL_SDK_DISABLED")?.toLowerCase() === "true") return { off: true };
  const exporters = (variable("OTEL_TRACES_EXPORTER") ?? "").toLowerCase().split(",");
  if (exporters.includes("none")) return { off: true };
  const configured = settings.traces;
  const url =
    (configured ? tracesUrl(configured.endpoint) : undefined) ??
    variable("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") ??
    optional(variable("OTEL_EXPORTER_OTLP_ENDPOINT"), tracesUrl) ??
    (exporters.includes("otlp") ? tracesUrl(DEFAULT_COLLECTOR) : undefined);
  if (url === undefined) return { off: true };
  const protocol =
    configured?.protocol ??
    variable("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL") ??
    variable("OTEL_EXPORTER_OTLP_PROTOCOL") ??
    "http/protobuf";
  if (protocol !== "http/protobuf") {
    return {
      off: true,
      warning: `traces are off: OTLP protocol "${protocol}" is not supported, only http/protobuf (see docs/telemetry.md)`,
    };
  }
  const resourceAttributes = keyValueList(variable("OTEL_RESOURCE_ATTRIBUTES"));
  const timeout = Number(
    variable("OTEL_EXPORTER_OTLP_TRACES_TIMEOUT") ?? variable("OTEL_EXPORTER_OTLP_TIMEOUT"),
  );
  const lengthLimit = Number(
    variable("OTEL_SPAN_ATTRIBUTE_VALUE_LENGTH_LIMIT") ?? variable("OTEL_ATTRIBUTE_VALUE_LENGTH_LIMIT"),
  );
  return {
    url,
    headers: {
      ...keyValueList(variable("OTEL_EXPORTER_OTLP_HEADERS")),
      ...keyValueList(variable("OTEL_EXPORTER_OTLP_TRACES_HEADERS")),
      ...configured?.headers,
    },
    serviceName:
      configured?.service_name ??
      variable("OTEL_SERVICE_NAME") ??
      resourceAttributes["service.name"] ??
      "agentd",
    resourceAttributes,
    content: configured?.content ?? false,
    exportTimeoutMilliseconds: Number.isFinite(timeout) && timeout > 0 ? timeout : 10_000,
    ...(Number.isInteger(lengthLimit) && lengthLimit > 0 ? { attributeValueLengthLimit: lengthLimit } : {}),
  };
}

/** A base URL gets `/v1/traces`; a URL that already ends in it is kept. */
function tracesUrl(endpoint: string): string {
  const trimmed = endpoint.replace(/\/+$/, "");
  return trimmed.endsWith(TRACES_PATH) ? trimmed : `${trimmed}${TRACES_PATH}`;
}

function optional<Value, Result>(
  value: Value | undefined,
  map: (value: Value) => Result,
): Result | undefined {
  return value === undefined ? undefined : map(value);
}

/** `key1=value1,key2=value2`, values percent-encoded (the W3C Baggage format the OTEL_* lists use). */
function keyValueList(text: string | undefined): Record<string, string> {
  const entries: Record<string, string> = {};
  for (const pair of (text ?? "").split(",")) {
    const at = pair.indexOf("=");
    if (at <= 0) continue;
    const key = pair.slice(0, at).trim();
    let value = pair.slice(at + 1).trim();
    try {
      value = decodeURIComponent(value);
    } catch {
      // Kept as written: a value with a stray % is still the operator's value.
    }
    if (key !== "") entries[key] = value;
  }
  return entries;
}
