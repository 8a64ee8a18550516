import type { CapabilityMode } from "../definitions/agent-schema.js";

/** http_request methods a `read-only` agent may send. */
export const READ_ONLY_HTTP_METHODS: readonly string[] = ["GET", "HEAD", "OPTIONS"];

/**
 * Why a call is refused under the agent's capability mode, or undefined. The definition already
 * leaves out the tools a mode removes; what remains to check is an argument: a `read-only` agent's
 * `http_request` may only read (GET, HEAD, OPTIONS).
 */
export function capabilityRefusal(mode: CapabilityMode, tool: string, value: unknown): string | undefined {
  if (mode !== "read-only" || tool !== "http_request") return undefined;
  const method = (value as { method?: unknown }).method;
  if (typeof method !== "string" || READ_ONLY_HTTP_METHODS.includes(method)) return undefined;
  return `http_request ${method} refused: this agent is read-only (capabilities: read-only) and may only send ${READ_ONLY_HTTP_METHODS.join(", ")}; do not retry it`;
}
