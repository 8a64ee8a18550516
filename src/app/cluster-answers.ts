import type { ApprovalsService, PendingApproval, QuestionsService } from "../api/api-services.js";
import { AgentdError } from "../errors/agentd-error.js";
import type { AgentEvent } from "../events/agent-event.js";
import type { EventFeed } from "../events/event-bus.js";
import type { Logger } from "../logging/logger.js";
import { isTerminal } from "../runs/run-status.js";
import {
  type AnsweredQuestion,
  type PendingQuestion,
  canonicalAnswer,
} from "../questions/question-broker.js";
import type { ClusterMembership, RunControlMessage } from "../store/cluster-membership.js";

/**
 * The approvals and questions pending on the other nodes of a cluster, followed from the events
 * every node sees (`approval` requested, `question` asked, until their next state). Arguments are
 * as the events carry them: masked.
 */
export class ClusterPending {
  readonly #approvals = new Map<string, PendingApproval>();
  readonly #questions = new Map<string, PendingQuestion>();
  readonly #unsubscribe: () => void;

  constructor(feed: EventFeed) {
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

  close(): void {
    this.#unsubscribe();
  }

  #follow(event: AgentEvent): void {
    if (event.run === null) return;
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

/** Sends an answer to the node running the run; the event of the answer follows from there. */
function forward(cluster: ClusterMembership, message: RunControlMessage, logger: Logger): void {
  cluster
    .sendControl(message)
    .catch((error: unknown) =>
      logger.warn(
        { err: error, run: message.run, node: message.node },
        "could not send an answer to the run's node",
      ),
    );
}

function nodeOfRun(cluster: ClusterMembership, run: string, what: string, id: string): string {
  const node = cluster.nodeOf(run);
  if (node === undefined)
    throw new AgentdError(
      what === "approval" ? "APPROVAL_NOT_FOUND" : "QUESTION_NOT_FOUND",
      `no pending ${what} "${id}"`,
    );
  return node;
}

/**
 * The approvals the API serves on a node of a cluster: this node's pending ones and the other
 * nodes'; a decision on another node's approval is sent to that node.
 */
export function clusterApprovals(
  local: ApprovalsService,
  pending: ClusterPending,
  cluster: ClusterMembership,
  logger: Logger,
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
      const node = remote === undefined ? cluster.node : nodeOfRun(cluster, remote.run, "approval", id);
      if (remote === undefined || node === cluster.node) {
        local.decide(id, decision, options);
        return;
      }
      const scope = options.scope ?? "once";
      forward(cluster, { node, run: remote.run, action: "decide", approval: id, decision, scope }, logger);
    },
  };
}

/**
 * The questions the API serves on a node of a cluster: this node's and the other nodes'; an
 * answer to another node's question is checked here (not empty, one of the choices) and sent there.
 */
export function clusterQuestions(
  local: QuestionsService,
  pending: ClusterPending,
  cluster: ClusterMembership,
  logger: Logger,
): QuestionsService {
  return {
    list: () => {
      const here = local.list();
      const ids = new Set(here.map((question) => question.id));
      const elsewhere = pending.questions().filter((question) => !ids.has(question.id));
      return [...here, ...elsewhere].sort((left, right) => left.asked_at.localeCompare(right.asked_at));
    },
    answer: (id, answer, options = {}): AnsweredQuestion => {
      const remote = pending.question(id);
      const node = remote === undefined ? cluster.node : nodeOfRun(cluster, remote.run, "question", id);
      if (remote === undefined || node === cluster.node) return local.answer(id, answer, options);
      const text = canonicalAnswer(answer, remote.choices);
      forward(cluster, { node, run: remote.run, action: "answer", question: id, answer: text }, logger);
      return { ...remote, answer: text };
    },
  };
}

/** Applies an answer another node sent for a run of this node. */
export function applyAnswer(
  message: Extract<RunControlMessage, { action: "decide" | "answer" }>,
  local: { approvals: ApprovalsService; questions: QuestionsService },
  logger: Logger,
): void {
  try {
    if (message.action === "decide")
      local.approvals.decide(message.approval, message.decision, { scope: message.scope });
    else local.questions.answer(message.question, message.answer, { by: "api" });
  } catch (error) {
    logger.warn({ err: error, run: message.run }, "could not apply an answer another node sent");
  }
}
