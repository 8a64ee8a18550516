import { AgentdError, type AgentdErrorOptions } from "../errors/agentd-error.js";
import type { ErrorCode } from "../errors/error-codes.js";
import { loadedOpenAiSdk } from "./openai-sdk.js";
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

/** The codes of the LLM error family. */
export type LlmErrorCode = Extract<ErrorCode, `LLM_${string}`>;

/**
 * What went wrong with a model call, finer than the code: an HTTP status is `auth` (401/403),
 * `rate_limit` (429), `server` (5xx, 408, 409) or `request` (any other 4xx).
 */
export type LlmErrorKind =
  | "auth"
  | "rate_limit"
  | "server"
  | "request"
  | "network"
  | "timeout"
  | "bad_response"
  | "aborted"
  | "circuit_open";

export interface LlmErrorOptions extends AgentdErrorOptions {
  /** Whether another attempt at the same call may succeed. */
  retryable: boolean;
  /** The HTTP status the endpoint answered with, for `LLM_HTTP`. */
  status?: number;
  /** The wait the endpoint asked for (`retry-after`), or the time until a paused circuit tries again. */
  retryAfterMilliseconds?: number;
  /** Default: read from the code and the status. */
  kind?: LlmErrorKind;
}

/**
 * The error of a model call: an AgentdError with typed fields saying where it went (endpoint,
 * model), what went wrong (`kind`, `status`) and whether another attempt may help (`retryable`,
 * `retryAfterMilliseconds`). Its JSON keeps them under `details` (`retry_after_ms`), as before.
 */
export class LlmError extends AgentdError {
  declare readonly code: LlmErrorCode;
  readonly kind: LlmErrorKind;
  readonly retryable: boolean;
  readonly status: number | undefined;
  readonly retryAfterMilliseconds: number | undefined;
  readonly endpoint: string;
  readonly model: string;

  constructor(code: LlmErrorCode, message: string, site: CallSite, options: LlmErrorOptions) {
    const { retryable, retryAfterMilliseconds, status, kind, details, ...rest } = options;
    super(code, message, {
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
    this.kind = kind ?? kindOf(code, status);
    this.retryable = retryable;
    this.status = status;
    this.retryAfterMilliseconds = retryAfterMilliseconds;
    this.endpoint = site.endpoint;
    this.model = site.model;
  }
}

function kindOf(code: LlmErrorCode, status: number | undefined): LlmErrorKind {
  if (code === "LLM_TIMEOUT") return "timeout";
  if (code === "LLM_BAD_RESPONSE") return "bad_response";
  if (code === "LLM_CIRCUIT_OPEN") return "circuit_open";
  if (code === "LLM_NETWORK" || status === undefined) return "network";
  if (status === 401 || status === 403) return "auth";
  if (status === 429) return "rate_limit";
  return isRetryableStatus(status) ? "server" : "request";
}

/** An LLM error (see LlmError). */
export function llmError(
  code: LlmErrorCode,
  message: string,
  site: CallSite,
  options: LlmErrorOptions,
): LlmError {
  return new LlmError(code, message, site, options);
}

/**
 * Turns whatever a model call threw into a typed LLM error: HTTP statuses → LLM_HTTP, connection
 * failures → LLM_NETWORK, unparsable chunks → LLM_BAD_RESPONSE. AgentdErrors pass through.
 */
export function classifyLlmError(thrown: unknown, site: CallSite): AgentdError {
  if (thrown instanceof AgentdError) return thrown;
  const where = `${site.model} at ${site.endpoint}`;
  const sdk = loadedOpenAiSdk();
  if (sdk && thrown instanceof sdk.APIUserAbortError) {
    return llmError("LLM_NETWORK", `the call to ${where} was aborted`, site, {
      retryable: false,
      kind: "aborted",
      cause: thrown,
    });
  }
  if (sdk && thrown instanceof sdk.APIConnectionError) {
    return llmError("LLM_NETWORK", `cannot reach ${where}: ${causeMessage(thrown)}`, site, {
      retryable: true,
      hint: unreachableHint(site.endpoint, site.model),
      cause: thrown,
    });
  }
  if (sdk && thrown instanceof sdk.APIError && thrown.status !== undefined) {
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

/** `Connection error: fetch failed`: the SDK's message, then its cause's, without a doubled `.:`. */
function causeMessage(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  if (!(error.cause instanceof Error)) return error.message;
  return `${error.message.replace(/[.\s]+$/, "")}: ${error.cause.message}`;
}
