import { createInterface, type Interface } from "node:readline";
import { AgentdError } from "../errors/agentd-error.js";
import { formatDuration } from "../util/duration.js";
import type { ApprovalBroker, RequestedApproval } from "./approval-broker.js";
import { terminalSafeText } from "../util/terminal-safe-text.js";

/** Longest argument text shown in a question; the rest is counted, not printed. */
const SHOWN_ARGUMENT_CHARACTERS = 2_000;

type Answer = { decision: "approve" | "deny"; scope: "once" | "run" };

const ANSWERS: Record<string, Answer> = {
  y: { decision: "approve", scope: "once" },
  yes: { decision: "approve", scope: "once" },
  n: { decision: "deny", scope: "once" },
  no: { decision: "deny", scope: "once" },
  a: { decision: "approve", scope: "run" },
  always: { decision: "approve", scope: "run" },
};

export interface ApprovalPromptOptions {
  /** Where the human types answers (the terminal's stdin). */
  input: NodeJS.ReadableStream;
  /** Where questions go (stderr, so stdout keeps only the result). */
  write: (text: string) => void;
}

/**
 * Asks on a terminal about each approval the broker receives, one at a time, in order: the tool,
 * why it asks, the masked arguments, then "approve? [y]es / [n]o / [a]lways for this run". The
 * answer is decided `by: "tty"`. Input is read only once a first request comes. Returns the function
 * that stops asking and releases the input (call it when the run ends, or the process stays alive).
 */
export function promptApprovals(broker: ApprovalBroker, options: ApprovalPromptOptions): () => void {
  const queue: RequestedApproval[] = [];
  let lines: Interface | undefined;
  let closing = false;
  const isPending = (id: string) => broker.list().some((approval) => approval.id === id);
  const askNext = () => {
    // Requests that expired or whose run stopped while queued are not asked any more.
    while (queue[0] && !isPending(queue[0].id)) queue.shift();
    if (queue[0]) options.write(question(queue[0]));
  };
  const onLine = (line: string) => {
    const current = queue[0];
    if (!current) return;
    const answer = ANSWERS[line.trim().toLowerCase()];
    if (!answer) {
      options.write("please answer y (yes), n (no) or a (always for this run) › ");
      return;
    }
    queue.shift();
    try {
      broker.decide(current.id, answer.decision, { scope: answer.scope, by: "tty" });
    } catch (error) {
      if (!AgentdError.is(error, "APPROVAL_NOT_FOUND")) throw error;
      options.write(`approval ${current.id} is no longer pending (it expired or the run stopped)\n`);
    }
    askNext();
  };
  const onClose = () => {
    if (closing) return;
    lines = undefined;
    options.write("the terminal input ended: pending approvals follow approvals.on_timeout\n");
    queue.length = 0;
  };
  const unsubscribe = broker.onRequested((approval) => {
    if (closing) return;
    if (!lines) {
      lines = createInterface({ input: options.input, terminal: false });
      lines.on("line", onLine);
      lines.on("close", onClose);
    }
    queue.push(approval);
    if (queue.length === 1) askNext();
  });
  return () => {
    closing = true;
    unsubscribe();
    lines?.close();
  };
}

/**
 * Where no one can be asked (no terminal, or `--json`): says on `write`, for each request, that it
 * will follow the agent's `on_timeout` when its timeout passes. Returns the function that stops.
 */
export function announceApprovals(broker: ApprovalBroker, write: (text: string) => void): () => void {
  return broker.onRequested((approval) => {
    write(
      `approval ${approval.id}: ${approval.tool} waits for an answer, but there is no terminal to ask; ` +
        `${expiry(approval)}\n`,
    );
  });
}

function question(approval: RequestedApproval): string {
  // The arguments are the agent's: what the operator approves is shown, never obeyed by the terminal.
  return [
    terminalSafeText(`approval ${approval.id}: ${approval.tool} (${approval.reason}; ${expiry(approval)})`),
    `  arguments: ${terminalSafeText(shownArguments(approval.arguments))}`,
    "approve? [y]es / [n]o / [a]lways for this run › ",
  ].join("\n");
}

/** "denied in 10m (approvals.on_timeout)". */
function expiry(approval: RequestedApproval): string {
  const wait = formatDuration(Date.parse(approval.expires_at) - Date.parse(approval.requested_at));
  const outcome = approval.on_timeout === "approve" ? "approved" : "denied";
  return `${outcome} in ${wait} if unanswered (approvals.on_timeout)`;
}

function shownArguments(value: unknown): string {
  const text = JSON.stringify(value ?? {}, null, 2).replace(/\n/g, "\n  ");
  if (text.length <= SHOWN_ARGUMENT_CHARACTERS) return text;
  const rest = text.length - SHOWN_ARGUMENT_CHARACTERS;
  return `${text.slice(0, SHOWN_ARGUMENT_CHARACTERS)}… (${rest} more characters)`;
}
