import { APIConnectionError, APIError, APIUserAbortError } from "openai";
import { AgentdError, type AgentdErrorOptions } from "../errors/agentd-error.js";
import type { ErrorCode } from "../errors/error-codes.js";
import { parseRetryAfter } from "./retry-delay.js";
import { unreachableHint } from "./unreachable-hint.js";

/** Where a model call went: named in every LLM error so the user knows which endpoint and model. */
export interface CallSite {
  endpoint: string;
  model: string;
}

/** Statuses worth another attempt: rate limit, timeouts, conflicts and server errors. */
function isRetryableStatus(status: number): boolean {
  return status === 408 || status === 409 || status === 429 || status >= 500;
}

/** An LLM error: an AgentdError whose details say whether another attempt may help. */
export function llmError(
  code: Extract<ErrorCode, `LLM_${string}`>,
  message: string,
  site: CallSite,
  options: AgentdErrorOptions & { retryable: boolean; retryAfterMilliseconds?: number; status?: number },
): AgentdError {
  const { retryable, retryAfterMilliseconds, status, details, ...rest } = options;
  return new AgentdError(code, message, {
    ...rest,
    details: {
      ...details,
      endpoint: site.endpoint,
      model: site.model,
      retryable,
      ...(status === undefined ? {} : { status }),
      ...(retryAfterMilliseconds === undefined ? {} : { retry_after_ms: retryAfterMilliseconds }),
    },
  });
}

/** Whether another attempt at the same call may succeed. */
export function isRetryable(error: AgentdError): boolean {
  return error.details?.retryable === true;
}

/** The wait the server asked for, if it did. */
export function retryAfterOf(error: AgentdError): number | undefined {
  const value = error.details?.retry_after_ms;
  return typeof value === "number" ? value : undefined;
}

/**
 * Turns whatever a model call threw into a typed LLM error: HTTP statuses → LLM_HTTP, connection
 * failures → LLM_NETWORK, unparsable chunks → LLM_BAD_RESPONSE. AgentdErrors pass through.
 */
export function classifyLlmError(thrown: unknown, site: CallSite): AgentdError {
  if (thrown instanceof AgentdError) return thrown;
  const where = `${site.model} at ${site.endpoint}`;
  if (thrown instanceof APIUserAbortError) {
    return llmError("LLM_NETWORK", `the call to ${where} was aborted`, site, {
      retryable: false,
      cause: thrown,
    });
  }
  if (thrown instanceof APIConnectionError) {
    return llmError("LLM_NETWORK", `cannot reach ${where}: ${causeMessage(thrown)}`, site, {
      retryable: true,
      hint: unreachableHint(site.endpoint, site.model),
      cause: thrown,
    });
  }
  if (thrown instanceof APIError && thrown.status !== undefined) {
    const retryAfterMilliseconds = parseRetryAfter(thrown.headers);
    return llmError("LLM_HTTP", `${where} answered HTTP ${thrown.status}: ${thrown.message}`, site, {
      retryable: isRetryableStatus(thrown.status),
      status: thrown.status,
      ...(retryAfterMilliseconds === undefined ? {} : { retryAfterMilliseconds }),
      hint: hintForStatus(thrown.status),
      cause: thrown,
    });
  }
  if (thrown instanceof SyntaxError) {
    return llmError("LLM_BAD_RESPONSE", `${where} sent a chunk that is not JSON: ${thrown.message}`, site, {
      retryable: true,
      cause: thrown,
    });
  }
  return llmError("LLM_NETWORK", `the call to ${where} failed: ${causeMessage(thrown)}`, site, {
    retryable: true,
    hint: unreachableHint(site.endpoint, site.model),
    cause: thrown,
  });
}

function hintForStatus(status: number): string {
  if (status === 401 || status === 403) return "check llm.api_key (or the key of this endpoint)";
  if (status === 404) return "check the model name and llm.base_url";
  if (status === 429) return "the endpoint is rate limiting; lower concurrency or raise the quota";
  if (status >= 500) return "the model server failed; agentd retries with back-off";
  return "check the request the agent sends (model, tools, parameters)";
}

function causeMessage(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  const cause = error.cause instanceof Error ? `: ${error.cause.message}` : "";
  return `${error.message}${cause}`;
}
