import type { ApprovalsService, QuestionsService } from "../api/api-services.js";
import type { PendingApproval } from "../approvals/approval-broker.js";
import { type Clock, systemClock } from "../clock/clock.js";
import { AgentdError } from "../errors/agentd-error.js";
import type { AgentEvent } from "../events/agent-event.js";
import type { EventFeed } from "../events/event-bus.js";
import type { Logger } from "../logging/logger.js";
import { isTerminal } from "../run-vocabulary/run-status.js";
import {
  type AnsweredQuestion,
  type PendingQuestion,
  canonicalAnswer,
} from "../questions/question-broker.js";
import type { ClusterMembership, RunControlMessage } from "../store/cluster-membership.js";

/** How long an answer given here waits for the run's node to apply it before the API gives up. */
const CONFIRM_MILLISECONDS = 10_000;

/**
 * The approvals and questions pending on the other nodes of a cluster, followed from the events
 * every node sees (`approval` requested, `question` asked, until their next state). Arguments are
 * as the events carry them: masked.
 */
export class ClusterPending {
  readonly #approvals = new Map<string, PendingApproval>();
  readonly #questions = new Map<string, PendingQuestion>();
  /** Answers given here, each waiting for the event of its request's next state (or its run's end). */
  readonly #waiting = new Set<{ run: string; id: string; settle: (event: AgentEvent) => void }>();
  readonly #unsubscribe: () => void;
  readonly #clock: Clock;

  /** `clock` bounds the wait for an answer's confirmation (default: the system clock). */
  constructor(feed: EventFeed, clock: Clock = systemClock) {
    this.#clock = clock;
    this.#unsubscribe = feed.subscribe((event) => this.#follow(event));
  }

  approvals(): PendingApproval[] {
    return [...this.#approvals.values()];
  }

  questions(): PendingQuestion[] {
    return [...this.#questions.values()];
  }

  approval(id: string): PendingApproval | undefined {
    return this.#approvals.get(id);
  }

  question(id: string): PendingQuestion | undefined {
    return this.#questions.get(id);
  }

  /**
   * Resolves with the next event that settles request `id` of `run`: its `approval` or `question`
   * event past requested/asked, or the run's terminal `status`. Rejects with NODE_UNREACHABLE when
   * none comes within `milliseconds`. Call before sending the answer: the event may come at once.
   */
  settled(run: string, id: string, milliseconds = CONFIRM_MILLISECONDS): Promise<AgentEvent> {
    return new Promise((resolve, reject) => {
      const waiter = {
        run,
        id,
        settle: (event: AgentEvent) => {
          cancelTimer();
          this.#waiting.delete(waiter);
          resolve(event);
        },
      };
      const cancelTimer = this.#clock.setTimer(() => {
        this.#waiting.delete(waiter);
        reject(
          new AgentdError(
            "NODE_UNREACHABLE",
            `the node running ${run} did not confirm the answer to "${id}"`,
            {
              hint: `it is kept in the store and applied if that node reads it; GET /runs/${run}/events shows whether it was`,
            },
          ),
        );
      }, milliseconds);
      this.#waiting.add(waiter);
    });
  }

  close(): void {
    this.#unsubscribe();
  }

  #settle(event: AgentEvent): void {
    const ended = event.type === "status" && isTerminal(event.data.status);
    const next =
      (event.type === "approval" && event.data.state !== "requested") ||
      (event.type === "question" && event.data.state !== "asked");
    if (!ended && !next) return;
    const id = event.type === "approval" || event.type === "question" ? event.data.id : undefined;
    for (const waiter of [...this.#waiting])
      if (waiter.run === event.run && (ended || waiter.id === id)) waiter.settle(event);
  }

  #follow(event: AgentEvent): void {
    if (event.run === null) return;
    if (this.#waiting.size > 0) this.#settle(event);
    // A run that ended (a node that died included) leaves nothing to answer.
    if (event.type === "status" && isTerminal(event.data.status)) {
      for (const [id, approval] of this.#approvals)
        if (approval.run === event.run) this.#approvals.delete(id);
      for (const [id, question] of this.#questions)
        if (question.run === event.run) this.#questions.delete(id);
      return;
    }
    if (event.type === "approval") {
      const { data } = event;
      if (data.state !== "requested") {
        this.#approvals.delete(data.id);
        return;
      }
      this.#approvals.set(data.id, {
        id: data.id,
        agent: event.agent,
        run: event.run,
        tool: data.tool,
        arguments: data.arguments,
        requested_at: event.time,
        ...(data.expires_at === undefined ? {} : { expires_at: data.expires_at }),
      });
    } else if (event.type === "question") {
      const { data } = event;
      if (data.state !== "asked") {
        this.#questions.delete(data.id);
        return;
      }
      this.#questions.set(data.id, {
        id: data.id,
        agent: event.agent,
        run: event.run,
        question: data.question,
        ...(data.choices === undefined ? {} : { choices: data.choices }),
        asked_at: event.time,
        expires_at: data.expires_at ?? event.time,
      });
    }
  }
}

/**
 * Sends an answer to the node running the run and waits until that node applied it: the event of
 * the request's next state (or the run's end) comes back through the change feed. Resolves with
 * that event; rejects with STORE_UNAVAILABLE (not sent) or NODE_UNREACHABLE (not confirmed).
 */
async function deliver(
  cluster: ClusterMembership,
  pending: ClusterPending,
  message: Extract<RunControlMessage, { action: "decide" | "answer" }>,
): Promise<AgentEvent> {
  const id = message.action === "decide" ? message.approval : message.question;
  const settled = pending.settled(message.run, id);
  // Not confirmed because not sent: the send's error is the answer, the wait is dropped.
  void settled.catch(() => undefined);
  await cluster.sendControl(message);
  return settled;
}

/** The run's node applied something else first: an expiry, another answer, the run's end. */
function answeredOtherwise(event: AgentEvent, id: string): AgentdError {
  const what =
    event.type === "approval" || event.type === "question"
      ? `was ${event.data.state} first`
      : `ended first: its run is ${event.type === "status" ? event.data.status : "over"}`;
  return new AgentdError("CONFLICT", `"${id}" ${what}`, {
    hint: "GET /approvals or GET /questions lists what is still waiting",
  });
}

/**
 * The node another node's pending request is to be answered on; undefined when it is this node's
 * (always, for a daemon alone on its store). NOT_FOUND when no node holds its run.
 */
function remoteNodeOf(cluster: ClusterMembership, run: string, what: string, id: string): string | undefined {
  const node = cluster.nodeOf(run);
  if (node === cluster.node) return undefined;
  if (node === undefined)
    throw new AgentdError(
      what === "approval" ? "APPROVAL_NOT_FOUND" : "QUESTION_NOT_FOUND",
      `no pending ${what} "${id}"`,
    );
  return node;
}

/**
 * The approvals the API serves on a node of a cluster: this node's pending ones and the other
 * nodes'; a decision on another node's approval is sent to that node, and answered once that node
 * applied it.
 */
export function clusterApprovals(
  local: ApprovalsService,
  pending: ClusterPending,
  cluster: ClusterMembership,
): ApprovalsService {
  return {
    list: () => {
      const here = local.list();
      const ids = new Set(here.map((approval) => approval.id));
      const elsewhere = pending.approvals().filter((approval) => !ids.has(approval.id));
      return [...here, ...elsewhere].sort((left, right) =>
        (left.requested_at ?? "").localeCompare(right.requested_at ?? ""),
      );
    },
    decide: (id, decision, options = {}) => {
      const remote = pending.approval(id);
      const node = remote === undefined ? undefined : remoteNodeOf(cluster, remote.run, "approval", id);
      // Answered once the decision's event is where every node reads it (committed).
      if (remote === undefined || node === undefined)
        return Promise.resolve(local.decide(id, decision, options)).then(() => cluster.synced());
      const scope = options.scope ?? "once";
      return deliver(cluster, pending, {
        node,
        run: remote.run,
        action: "decide",
        approval: id,
        decision,
        scope,
        ...(options.actor === undefined ? {} : { actor: options.actor }),
      }).then((event) => {
        const applied = decision === "approve" ? "approved" : "denied";
        if (event.type !== "approval" || event.data.state !== applied) throw answeredOtherwise(event, id);
      });
    },
  };
}

/**
 * The questions the API serves on a node of a cluster: this node's and the other nodes'; an
 * answer to another node's question is checked here (not empty, one of the choices), sent there,
 * and answered once that node applied it.
 */
export function clusterQuestions(
  local: QuestionsService,
  pending: ClusterPending,
  cluster: ClusterMembership,
): QuestionsService {
  return {
    list: () => {
      const here = local.list();
      const ids = new Set(here.map((question) => question.id));
      const elsewhere = pending.questions().filter((question) => !ids.has(question.id));
      return [...here, ...elsewhere].sort((left, right) => left.asked_at.localeCompare(right.asked_at));
    },
    answer: (id, answer, options = {}) => {
      const remote = pending.question(id);
      const node = remote === undefined ? undefined : remoteNodeOf(cluster, remote.run, "question", id);
      if (remote === undefined || node === undefined)
        return Promise.resolve(local.answer(id, answer, options)).then(async (answered) => {
          await cluster.synced();
          return answered;
        });
      const text = canonicalAnswer(answer, remote.choices);
      return deliver(cluster, pending, {
        node,
        run: remote.run,
        action: "answer",
        question: id,
        answer: text,
        ...(options.actor === undefined ? {} : { actor: options.actor }),
      }).then((event): AnsweredQuestion => {
        if (event.type !== "question" || event.data.state !== "answered") throw answeredOtherwise(event, id);
        return { ...remote, answer: text };
      });
    },
  };
}

/** Applies an answer another node sent for a run of this node. */
export function applyAnswer(
  message: Extract<RunControlMessage, { action: "decide" | "answer" }>,
  local: { approvals: ApprovalsService; questions: QuestionsService },
  logger: Logger,
): void {
  const apply = async () => {
    if (message.action === "decide")
      await local.approvals.decide(message.approval, message.decision, {
        scope: message.scope,
        ...(message.actor === undefined ? {} : { actor: message.actor }),
      });
    else
      await local.questions.answer(message.question, message.answer, {
        by: "api",
        ...(message.actor === undefined ? {} : { actor: message.actor }),
      });
  };
  apply().catch((error: unknown) =>
    logger.warn({ err: error, run: message.run }, "could not apply an answer another node sent"),
  );
}
