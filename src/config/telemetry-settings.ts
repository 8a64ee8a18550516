import { z } from "zod";

/**
 * Config `telemetry.traces` (SPEC 10): where OpenTelemetry traces go. Absent, traces follow the
 * standard `OTEL_*` variables (off when none is set); present, its fields win over them.
 */
export const TraceSettingsSchema = z.strictObject({
  /**
   * The collector: a base URL like OTEL_EXPORTER_OTLP_ENDPOINT (`http://collector:4318`, to which
   * `/v1/traces` is added), or a URL that already ends in `/v1/traces`.
   */
  endpoint: z.url({ protocol: /^https?$/ }),
  /** OTLP over HTTP with protobuf bodies (the default); gRPC is not offered (see docs/telemetry.md). */
  protocol: z
    .enum(["http/protobuf"], {
      message: 'telemetry.traces.protocol must be "http/protobuf" (gRPC is not supported)',
    })
    .optional(),
  /** Sent with every export (an API key: `{{secret:name}}` works, and is masked). */
  headers: z.record(z.string(), z.string()).optional(),
  /** Prompt, completion, task and tool arguments and results in spans (default false); masked even then. */
  content: z.boolean().optional(),
  /** A trace UI's link for a run, `{trace_id}` replaced: the dashboard's run page shows it. */
  trace_url: z
    .string()
    .refine((template) => template.includes("{trace_id}"), "trace_url must contain {trace_id}")
    .refine((template) => /^https?:\/\//.test(template), "trace_url must be an http(s) URL")
    .optional(),
  /** The service name on every span (over OTEL_SERVICE_NAME); default `agentd`. */
  service_name: z.string().min(1).optional(),
});
export type TraceSettings = z.infer<typeof TraceSettingsSchema>;

/** Config `telemetry`: traces only for now. */
export const TelemetrySettingsSchema = z.strictObject({ traces: TraceSettingsSchema.optional() });
export type TelemetrySettings = z.infer<typeof TelemetrySettingsSchema>;
