import { setTimeout as sleep } from "node:timers/promises";
import type OpenAI from "openai";
import type { Config } from "../config/config-schema.js";
import type { AgentdError } from "../errors/agentd-error.js";
import { CircuitBreakers } from "./circuit-breakers.js";
import { type CutOffSpending, spentByCutOff } from "./cut-off-spending.js";
import { LlmCallFeed, type LlmTelemetry } from "./llm-call-feed.js";
import { LOCAL_OLLAMA_URL } from "./unreachable-hint.js";
import type { ModelResponse } from "./chat-message.js";
import { type CallSite, LlmError, classifyLlmError } from "./llm-error.js";
import { modelFetch } from "./model-fetch.js";
import { withPlainAnswerLimit } from "./plain-answer-limit.js";
import { loadOpenAiSdk } from "./openai-sdk.js";
import type { PriceTable } from "./price-table.js";
import { RequestBodies } from "./request-body.js";
import { type BackoffSettings, retryDelay } from "./retry-delay.js";
import {
  type CallTimeouts,
  type ChatRequest,
  type CutOffCheck,
  streamCompletion,
} from "./stream-completion.js";

/** Where OpenAI's own API lives, used when an API key is set without a base URL. */
const OPENAI_BASE_URL = "https://api.openai.com/v1";

export interface ModelClientSettings {
  baseUrl: string;
  /** Local servers need none; the SDK insists on a value, so a placeholder goes out then. */
  apiKey?: string | undefined;
  timeouts: CallTimeouts;
  /** Attempts per model, the first included. */
  maxAttempts: number;
  backoff: BackoffSettings;
  circuitBreaker: { failureThreshold: number; cooldownMilliseconds: number };
  prices: PriceTable;
  /**
   * Requests go through kept-alive connections of the client's own (an undici Agent, model-fetch.ts):
   * ~40 % less of the event loop's CPU per call, undici loaded at the first call (the daemon).
   * Without it, Node's global `fetch`: nothing more to load (`agentd run`, a few calls).
   */
  ownConnections?: boolean | undefined;
}

/** A retry about to happen, for the loop's `error` events. */
export interface RetryNotice {
  error: LlmError;
  model: string;
  /** The attempt that failed, from 1. */
  attempt: number;
  delayMilliseconds: number;
}

export interface CompleteOptions {
  /** The run's signal: stop, timeout and shutdown abort the call in flight. */
  signal: AbortSignal;
  /** Models tried in order after `request.model` keeps failing. */
  fallbackModels?: readonly string[];
  cutOff?: CutOffCheck;
  onRetry?: (notice: RetryNotice) => void;
  /** Called when a model gave up and the next fallback model is tried. */
  onFallback?: (from: string, to: string, error: AgentdError) => void;
  /**
   * Called with what an attempt cut off mid-stream had spent (a budget cut-off, an answer past its
   * size cap), before the call goes on to a fallback model or fails: the provider bills it.
   */
  onSpent?: (spent: CutOffSpending) => void;
}

/** What the loop needs from a model: one answer per call, retries and fallbacks inside. */
export interface ModelProvider {
  complete(request: ChatRequest, options: CompleteOptions): Promise<ModelResponse>;
}

/**
 * The model client over the `openai` SDK (any OpenAI-compatible endpoint): streaming calls with
 * agentd's own retries (exponential back-off with jitter, honouring `retry-after`), per-call
 * timeouts, a circuit breaker per endpoint and model, and fallback models tried in order: a model
 * whose circuit is open is skipped for the next one.
 */
export class ModelClient implements ModelProvider {
  readonly endpoint: string;
  readonly breakers: CircuitBreakers;
  /** Every attempt, for metrics (calls by model and outcome, latency, retries). */
  readonly calls = new LlmCallFeed();
  #client: Promise<OpenAI> | undefined;
  /** The JSON texts of the messages and tools of every run's calls, each made once. */
  readonly #bodies = new RequestBodies();
  readonly #settings: ModelClientSettings;

  constructor(settings: ModelClientSettings) {
    this.#settings = settings;
    this.endpoint = settings.baseUrl;
    this.breakers = new CircuitBreakers(settings.baseUrl, settings.circuitBreaker);
  }

  /** The SDK client, made on the first call (the SDK, and undici for own connections, are imported then). */
  #connect(): Promise<OpenAI> {
    const settings = this.#settings;
    this.#client ??= Promise.all([
      loadOpenAiSdk(),
      settings.ownConnections ? import("undici") : undefined,
    ]).then(
      ([sdk, undici]) =>
        new sdk.OpenAI({
          baseURL: settings.baseUrl,
          apiKey: settings.apiKey || "not-needed",
          maxRetries: 0,
          timeout: settings.timeouts.callMilliseconds,
          logLevel: "off",
          // Either way an answer that is not a stream is read up to a limit (plain-answer-limit.ts).
          fetch: undici
            ? modelFetch(undici)
            : async (input: string | URL | Request, init?: RequestInit) =>
                withPlainAnswerLimit(await fetch(input, init)),
        }),
    );
    return this.#client;
  }

  /** The client for config `llm` (already expanded: base URL defaulted, secrets resolved). */
  static fromConfig(llm: Config["llm"], ownConnections = false): ModelClient {
    return new ModelClient({
      ownConnections,
      baseUrl: llm.base_url ?? (llm.api_key ? OPENAI_BASE_URL : LOCAL_OLLAMA_URL),
      apiKey: llm.api_key,
      timeouts: {
        firstChunkMilliseconds: llm.timeouts.first_chunk,
        idleMilliseconds: llm.timeouts.idle,
        callMilliseconds: llm.timeouts.call,
      },
      maxAttempts: llm.retries.max_attempts,
      backoff: { baseDelayMilliseconds: llm.retries.base_delay, maxDelayMilliseconds: llm.retries.max_delay },
      circuitBreaker: {
        failureThreshold: llm.circuit_breaker.failure_threshold,
        cooldownMilliseconds: llm.circuit_breaker.cooldown,
      },
      prices: llm.prices,
    });
  }

  async complete(request: ChatRequest, options: CompleteOptions): Promise<ModelResponse> {
    const models = [
      request.model,
      ...(options.fallbackModels ?? []).filter((model) => model !== request.model),
    ];
    let lastError: AgentdError | undefined;
    for (const [index, model] of models.entries()) {
      try {
        return await this.#completeWithRetries({ ...request, model }, options);
      } catch (error) {
        const failure = classifyLlmError(error, this.#site(model));
        if (options.signal.aborted || failure.code === "BUDGET_EXCEEDED") throw failure;
        lastError = failure;
        const next = models[index + 1];
        if (next) options.onFallback?.(model, next, failure);
      }
    }
    throw lastError ?? classifyLlmError(new Error("no model to call"), this.#site(request.model));
  }

  async #completeWithRetries(request: ChatRequest, options: CompleteOptions): Promise<ModelResponse> {
    const site = this.#site(request.model);
    const breaker = this.breakers.of(request.model);
    const client = await this.#connect();
    for (let attempt = 1; ; attempt += 1) {
      const startedAt = performance.now();
      // Every call of every round reports; with no listener (no metrics) there is nothing to build.
      const report = (outcome: string, retried: boolean) => {
        if (!this.calls.listened) return;
        this.calls.report({
          ...site,
          outcome,
          durationMilliseconds: performance.now() - startedAt,
          retried,
        });
      };
      try {
        breaker.acquire();
      } catch (error) {
        report(classifyLlmError(error, site).code, false);
        throw error;
      }
      try {
        const response = await streamCompletion(request, {
          client,
          site,
          signal: options.signal,
          timeouts: this.#settings.timeouts,
          prices: this.#settings.prices,
          cutOff: options.cutOff,
          bodies: this.#bodies,
        });
        breaker.succeeded();
        report("ok", false);
        return response;
      } catch (error) {
        const failure = classifyLlmError(error, site);
        const spent = spentByCutOff(failure);
        if (spent !== undefined) options.onSpent?.(spent);
        if (options.signal.aborted || !(failure instanceof LlmError) || !failure.retryable) {
          breaker.released();
          report(options.signal.aborted ? "aborted" : failure.code, false);
          throw failure;
        }
        breaker.failed();
        const retried = attempt < this.#settings.maxAttempts;
        report(failure.code, retried);
        if (!retried) throw failure;
        const delayMilliseconds = retryDelay(attempt, this.#settings.backoff, failure.retryAfterMilliseconds);
        options.onRetry?.({ error: failure, model: request.model, attempt, delayMilliseconds });
        await sleep(delayMilliseconds, undefined, { signal: options.signal }).catch(() => {
          throw options.signal.reason;
        });
      }
    }
  }

  /** The calls and breaker state, for the daemon's metrics. */
  get telemetry(): LlmTelemetry {
    return {
      onCall: (listener) => this.calls.onCall(listener),
      breakerState: (model) => this.breakers.of(model).state,
    };
  }

  #site(model: string): CallSite {
    return { endpoint: this.endpoint, model };
  }
}
