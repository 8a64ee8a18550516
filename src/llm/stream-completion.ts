import type OpenAI from "openai";
import { AgentdError } from "../errors/agentd-error.js";
import { MAX_ANSWER_CHARACTERS, answerTooLarge } from "./answer-size-limit.js";
import type { ChatChunk } from "./chat-chunk-schema.js";
import type { CutOffSpending } from "./cut-off-spending.js";
import { ChatChunkSchema } from "./chat-chunk-schema.js";
import type { ChatMessage, ChatTool, ModelResponse } from "./chat-message.js";
import { estimateMessagesTokens, estimateTextTokens } from "./estimate-tokens.js";
import { type CallSite, classifyLlmError, llmError } from "./llm-error.js";
import { plainChatChunk } from "./plain-chat-chunk.js";
import { type PriceTable, costOf } from "./price-table.js";
import type { RequestBodies } from "./request-body.js";
import { StreamAssembler } from "./stream-assembler.js";

/** One chat completion request, as the loop builds it. */
export interface ChatRequest {
  model: string;
  messages: readonly ChatMessage[];
  tools?: readonly ChatTool[];
  temperature?: number;
  /** The messages' estimated tokens when the caller knows them already (estimateMessagesTokens). */
  promptTokens?: number;
}

/** The running estimate of a call in flight, given to a cut-off check after each chunk. */
export interface StreamProgress {
  promptTokens: number;
  completionTokens: number;
  costUsd: number;
}

/** Returns why the call must stop now (a budget it crossed), or undefined to let it go on. */
export type CutOffCheck = (progress: StreamProgress) => string | undefined;

export interface CallTimeouts {
  /** Until the first chunk arrives (connection and headers included). */
  firstChunkMilliseconds: number;
  /** Longest silence between two chunks. */
  idleMilliseconds: number;
  /** The whole call, hard. */
  callMilliseconds: number;
}

export interface AttemptOptions {
  client: OpenAI;
  site: CallSite;
  /** The run's signal: the parent of this call's signal. */
  signal: AbortSignal;
  timeouts: CallTimeouts;
  prices: PriceTable;
  cutOff?: CutOffCheck | undefined;
  /** The texts of the messages and tools sent before, kept for the next calls' bodies. */
  bodies: RequestBodies;
}

/**
 * One streamed model call, one attempt: no retries here. Its signal is a child of the run's signal,
 * aborted by the three timeouts or a budget cut-off with a typed reason. Always settles: a
 * completed answer, or an AgentdError (the run's own RunAbort when the run was stopped).
 */
export async function streamCompletion(
  request: ChatRequest,
  options: AttemptOptions,
): Promise<ModelResponse> {
  const { site, timeouts } = options;
  // One controller per attempt, aborted by the run's signal through a listener removed when the
  // attempt ends: AbortSignal.any would register a dependent signal on the run's long-lived signal
  // every call (kept until collected in Node 20), which the garbage collector then walks all run.
  const attempt = new AbortController();
  const { signal } = attempt;
  const abortWith = (reason: unknown) => {
    if (!signal.aborted) attempt.abort(reason);
  };
  const abortWithRun = () => abortWith(options.signal.reason);
  options.signal.addEventListener("abort", abortWithRun, { once: true });
  if (options.signal.aborted) abortWithRun();
  const timeout = (what: string, milliseconds: number) =>
    llmError("LLM_TIMEOUT", `${site.model} at ${site.endpoint}: ${what} (${milliseconds} ms)`, site, {
      retryable: true,
      hint: "raise llm.timeouts or check that the model server is not overloaded",
    });
  const hardTimer = setTimeout(
    () => abortWith(timeout("the call took too long", timeouts.callMilliseconds)),
    timeouts.callMilliseconds,
  );
  let silenceTimer = setTimeout(
    () => abortWith(timeout("no first chunk in time", timeouts.firstChunkMilliseconds)),
    timeouts.firstChunkMilliseconds,
  );
  const assembler = new StreamAssembler(site);
  const promptTokens = request.promptTokens ?? estimateMessagesTokens(request.messages);
  try {
    // A prompt that alone passes what the budget leaves would be cut off at the first chunk, its
    // tokens billed all the same: it is not sent (a child given a sliver of its parent's budget).
    const beforeSending = options.cutOff?.(progressOf(assembler, promptTokens, options.prices, site.model));
    if (beforeSending) throw notSent(beforeSending, site);
    const parameters: OpenAI.Chat.ChatCompletionCreateParamsStreaming = {
      model: request.model,
      messages: request.messages as OpenAI.Chat.ChatCompletionMessageParam[],
      ...(request.tools && request.tools.length > 0 ? { tools: [...request.tools] } : {}),
      ...(request.temperature === undefined ? {} : { temperature: request.temperature }),
      stream: true,
      stream_options: { include_usage: true },
    };
    // The body as text: the SDK sends a string body with a content type as it is, instead of
    // turning the whole conversation into JSON again (request-body.ts).
    const stream = await options.client.chat.completions.create(parameters, {
      signal,
      maxRetries: 0,
      timeout: timeouts.callMilliseconds,
      body: options.bodies.of(parameters),
      headers: { "content-type": "application/json" },
    });
    let firstChunk = true;
    for await (const raw of stream) {
      if (firstChunk) {
        firstChunk = false;
        clearTimeout(silenceTimer);
        silenceTimer = setTimeout(
          () => abortWith(timeout("the stream went silent", timeouts.idleMilliseconds)),
          timeouts.idleMilliseconds,
        );
      } else {
        // Restarts the silence countdown without a new timer per chunk (thousands a second under load).
        silenceTimer.refresh();
      }
      assembler.add(parseChunk(raw, site));
      if (assembler.characters > MAX_ANSWER_CHARACTERS) {
        abortWith(
          answerTooLarge(
            assembler.characters,
            site,
            spentSoFar(assembler, promptTokens, options.prices, site),
          ),
        );
      }
      const exceeded = options.cutOff?.(progressOf(assembler, promptTokens, options.prices, site.model));
      if (exceeded) abortWith(budgetExceeded(exceeded, assembler, promptTokens, options.prices, site));
      if (signal.aborted) break;
    }
    // The SDK ends the iteration quietly on abort: an aborted call must not pass for a finished one.
    signal.throwIfAborted();
    const answer = assembler.finish();
    const usage = answer.usage ?? estimatedUsage(promptTokens, assembler);
    return {
      text: answer.text,
      toolCalls: answer.toolCalls,
      finishReason: answer.finishReason,
      usage,
      usageReported: answer.usage !== undefined,
      costUsd: costOf(options.prices, site.model, usage),
      model: site.model,
    };
  } catch (error) {
    if (options.signal.aborted) throw options.signal.reason;
    if (error instanceof AgentdError && error.code === "BUDGET_EXCEEDED") throw error;
    if (attempt.signal.aborted && attempt.signal.reason instanceof AgentdError) throw attempt.signal.reason;
    throw classifyLlmError(error, site);
  } finally {
    options.signal.removeEventListener("abort", abortWithRun);
    clearTimeout(hardTimer);
    clearTimeout(silenceTimer);
  }
}

function parseChunk(raw: unknown, site: CallSite): ChatChunk {
  const plain = plainChatChunk(raw);
  if (plain !== undefined) return plain;
  const parsed = ChatChunkSchema.safeParse(raw);
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0];
  const where = issue ? `${issue.path.join(".")}: ${issue.message}` : "unknown shape";
  throw llmError(
    "LLM_BAD_RESPONSE",
    `${site.model} at ${site.endpoint} sent a malformed chunk (${where})`,
    site,
    {
      retryable: true,
    },
  );
}

function estimatedUsage(promptTokens: number, assembler: StreamAssembler) {
  const completionTokens = Math.ceil(assembler.characters / 4);
  return {
    prompt_tokens: promptTokens,
    completion_tokens: completionTokens,
    total_tokens: promptTokens + completionTokens,
  };
}

function progressOf(
  assembler: StreamAssembler,
  promptTokens: number,
  prices: PriceTable,
  model: string,
): StreamProgress {
  const usage = estimatedUsage(promptTokens, assembler);
  return { promptTokens, completionTokens: usage.completion_tokens, costUsd: costOf(prices, model, usage) };
}

/** What the call spent up to a cut (estimated): the provider bills it, so the run counts it. */
function spentSoFar(
  assembler: StreamAssembler,
  promptTokens: number,
  prices: PriceTable,
  site: CallSite,
): CutOffSpending {
  const usage = estimatedUsage(promptTokens, assembler);
  return { usage, costUsd: costOf(prices, site.model, usage) };
}

/** The cut-off error carries what the call spent up to the cut (estimated), so the run counts it. */
function budgetExceeded(
  why: string,
  assembler: StreamAssembler,
  promptTokens: number,
  prices: PriceTable,
  site: CallSite,
): AgentdError {
  const spent = spentSoFar(assembler, promptTokens, prices, site);
  return new AgentdError("BUDGET_EXCEEDED", `the model call was cut off mid-stream: ${why}`, {
    hint: "raise limits.max_tokens or limits.max_cost_usd of the agent",
    details: {
      model: site.model,
      completion_tokens_so_far: estimateTextTokens(assembler.partialText()),
      spent: { usage: spent.usage, cost_usd: spent.costUsd },
    },
  });
}

/** A call refused before it is sent: its prompt alone passes the budget; nothing was spent. */
function notSent(why: string, site: CallSite): AgentdError {
  return new AgentdError("BUDGET_EXCEEDED", `the model call was not sent: ${why}`, {
    hint: "raise limits.max_tokens or limits.max_cost_usd of the agent",
    details: { model: site.model },
  });
}
