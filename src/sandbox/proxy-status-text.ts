import { STATUS_CODES } from "node:http";

/** Longest reason phrase the proxy sends: a status line stays short. */
const MAX_STATUS_TEXT = 200;

/**
 * The reason phrase of a refusal by the sandbox's proxy: `Forbidden by the agentd sandbox:
 * registry.npmjs.org:443 is not in the sandbox's network list`. Clients that show only the status
 * line of a CONNECT answer (npm prints "403 <phrase> - GET <url>" and a generic text about security
 * policies) then name the cause. Printable ASCII only, so nothing can end the line early.
 */
export function refusalStatusText(status: number, reason: string): string {
  const text = `${STATUS_CODES[status] ?? "Error"} by the agentd sandbox: ${reason}`.replace(
    /[^\x20-\x7e]/g,
    "?",
  );
  return text.slice(0, MAX_STATUS_TEXT);
}
