import type { Actor } from "../events/actor.js";
import { type Clock, systemClock } from "../clock/clock.js";
import { randomBytes } from "node:crypto";
import { PendingAnswers } from "../approvals/pending-answers.js";
import { AgentdError } from "../errors/agentd-error.js";
import type { EventDataByType } from "../events/agent-event.js";
import type { EventPublisher } from "../events/event-bus.js";

/** One `ask_human` call waiting for a human (snake_case on the wire). */
export interface PendingQuestion {
  id: string;
  agent: string;
  run: string;
  question: string;
  /** When given, the answer must be one of them. */
  choices?: string[];
  asked_at: string;
  expires_at: string;
}

/** A question with the answer it was given (spelled as the matching choice). */
export type AnsweredQuestion = PendingQuestion & { answer: string };

/** A question a run asks. */
export interface QuestionRequest {
  agent: string;
  run: string;
  question: string;
  choices?: string[] | undefined;
  /** The agent's `approvals.timeout`: how long the run waits for an answer. */
  timeoutMilliseconds: number;
  /** The run's signal: a stop ends the wait by throwing its reason. */
  signal: AbortSignal;
  events: EventPublisher;
  /** The `ask_human` call asking, named in the events. */
  callId?: string | undefined;
}

/** How a question ended: the answer, or nobody answered in time. */
export type QuestionAnswer = { state: "answered"; answer: string; by: string } | { state: "expired" };

export interface QuestionBrokerOptions {
  /** Stamps the requests and runs their timeouts (default: the system clock). */
  clock?: Clock;
  /** Default: `q_` and 10 random hex digits. */
  createId?: () => string;
  /** Masks secret values in what `list()` returns (the events are masked by the bus). */
  redact?: <Value>(value: Value) => Value;
}

interface Pending {
  question: PendingQuestion;
  request: QuestionRequest;
}

/**
 * Parks `ask_human` calls until a human answers (`POST /questions/:id`, `agentd answer`, the
 * terminal prompt of `agentd run`), the agent's `approvals.timeout` passes, or the run stops. Each
 * question publishes `question` events on its run: "asked", then "answered", "expired" or
 * "cancelled" (`by: "stop"`).
 */
export class QuestionBroker {
  readonly #pending: PendingAnswers<Pending, QuestionAnswer>;
  readonly #listeners = new Set<(question: PendingQuestion) => void>();
  readonly #clock: Clock;
  readonly #createId: () => string;
  readonly #redact: <Value>(value: Value) => Value;

  constructor(options: QuestionBrokerOptions = {}) {
    this.#clock = options.clock ?? systemClock;
    this.#pending = new PendingAnswers(this.#clock);
    this.#createId = options.createId ?? (() => `q_${randomBytes(5).toString("hex")}`);
    this.#redact = options.redact ?? ((value) => value);
  }

  ask(request: QuestionRequest): Promise<QuestionAnswer> {
    const askedAt = new Date(this.#clock.now());
    const question: PendingQuestion = {
      id: this.#createId(),
      agent: request.agent,
      run: request.run,
      question: request.question,
      ...(request.choices && request.choices.length > 0 ? { choices: request.choices } : {}),
      asked_at: askedAt.toISOString(),
      expires_at: new Date(askedAt.getTime() + request.timeoutMilliseconds).toISOString(),
    };
    const answered = this.#pending.wait(
      question.id,
      { question, request },
      {
        timeoutMilliseconds: request.timeoutMilliseconds,
        signal: request.signal,
        onStop: () => this.#publish(request, question, { state: "cancelled", by: "stop" }),
        onExpiry: () => {
          this.#publish(request, question, { state: "expired", by: "timeout" });
          return { state: "expired" };
        },
      },
    );
    this.#publish(request, question, {
      state: "asked",
      ...(question.choices ? { choices: question.choices } : {}),
      expires_at: question.expires_at,
    });
    for (const listener of this.#listeners) listener(this.#redact(question));
    return answered;
  }

  /**
   * Answers a pending question. Throws QUESTION_NOT_FOUND for an unknown or already answered id,
   * BAD_REQUEST for an empty answer or one that is not among the question's choices.
   */
  answer(id: string, answer: string, options: { by?: string; actor?: Actor } = {}): AnsweredQuestion {
    const pending = this.#pending.get(id);
    if (!pending) {
      throw new AgentdError("QUESTION_NOT_FOUND", `no pending question "${id}"`, {
        hint: "it was answered, expired or its run ended; GET /questions lists the pending ones",
      });
    }
    const text = canonicalAnswer(answer, pending.question.choices);
    const by = options.by ?? "api";
    this.#pending.answer(id, { state: "answered", answer: text, by });
    this.#publish(pending.request, pending.question, {
      state: "answered",
      answer: text,
      by,
      ...(options.actor === undefined ? {} : { actor: options.actor }),
    });
    return this.#redact({ ...pending.question, answer: text });
  }

  /** The pending questions, oldest first, secret values masked. */
  list(): PendingQuestion[] {
    return this.#pending.entries().map(({ question }) => this.#redact(question));
  }

  /** Calls `listener` with every new question (the terminal prompt). Returns the unsubscribe. */
  onAsked(listener: (question: PendingQuestion) => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  #publish(
    request: QuestionRequest,
    question: PendingQuestion,
    data: Omit<EventDataByType["question"], "id" | "question">,
  ): void {
    request.events.publish({
      agent: request.agent,
      run: request.run,
      type: "question",
      data: {
        id: question.id,
        question: question.question,
        ...data,
        ...(request.callId === undefined ? {} : { call_id: request.callId }),
      },
    });
  }
}

/** The answer as stored: trimmed, and spelled as the matching choice when there are choices. */
export function canonicalAnswer(answer: string, choices: readonly string[] | undefined): string {
  const text = answer.trim();
  if (text === "") throw new AgentdError("BAD_REQUEST", "the answer is empty", { field: "answer" });
  if (!choices || choices.length === 0) return text;
  const chosen = choices.find((choice) => choice.trim().toLowerCase() === text.toLowerCase());
  if (chosen !== undefined) return chosen;
  throw new AgentdError("BAD_REQUEST", `"${text}" is not one of the choices: ${choices.join(", ")}`, {
    field: "answer",
    hint: "answer with one of the choices, spelled as listed",
  });
}
