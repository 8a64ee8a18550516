/**
 * A run's link in the operator's trace UI (config `telemetry.traces.trace_url`, `{trace_id}`
 * replaced), or nothing when no template is set or the run has no trace.
 */
export function traceLink(template: string | undefined, traceId: string | undefined): string | undefined {
  if (template === undefined || traceId === undefined || !/^[0-9a-f]{32}$/.test(traceId)) return undefined;
  return template.replaceAll("{trace_id}", traceId);
}
