import { createInterface, type Interface } from "node:readline";
import { AgentdError } from "../errors/agentd-error.js";
import type { PendingQuestion, QuestionBroker } from "./question-broker.js";
import { terminalSafeText } from "../util/terminal-safe-text.js";

export interface QuestionPromptOptions {
  /** Where the human types answers (the terminal's stdin). */
  input: NodeJS.ReadableStream;
  /** Where questions go (stderr, so stdout keeps only the result). */
  write: (text: string) => void;
}

/**
 * Puts each question `ask_human` asks to the human on the terminal, one at a time: the question,
 * its numbered choices, then the prompt. A choice may be typed or picked by its number. The answer
 * is given `by: "tty"`. Returns the function that stops asking and releases the input.
 */
export function promptQuestions(broker: QuestionBroker, options: QuestionPromptOptions): () => void {
  const queue: PendingQuestion[] = [];
  let lines: Interface | undefined;
  let closing = false;
  const isPending = (id: string) => broker.list().some((question) => question.id === id);
  const askNext = () => {
    while (queue[0] && !isPending(queue[0].id)) queue.shift();
    if (queue[0]) options.write(prompt(queue[0]));
  };
  const onLine = (line: string) => {
    const current = queue[0];
    if (!current || line.trim() === "") return;
    try {
      broker.answer(current.id, chosen(line, current.choices), { by: "tty" });
    } catch (error) {
      if (AgentdError.is(error, "BAD_REQUEST")) {
        options.write(`${(error as AgentdError).message} › `);
        return;
      }
      if (!AgentdError.is(error, "QUESTION_NOT_FOUND")) throw error;
      options.write(`question ${current.id} is no longer pending (it expired or the run stopped)\n`);
    }
    queue.shift();
    askNext();
  };
  const unsubscribe = broker.onAsked((question) => {
    if (closing) return;
    if (!lines) {
      lines = createInterface({ input: options.input, terminal: false });
      lines.on("line", onLine);
      lines.on("close", () => {
        if (closing) return;
        lines = undefined;
        queue.length = 0;
        options.write("the terminal input ended: pending questions expire unanswered\n");
      });
    }
    queue.push(question);
    if (queue.length === 1) askNext();
  });
  return () => {
    closing = true;
    unsubscribe();
    lines?.close();
  };
}

/** Where no one can be asked (no terminal, or `--json`): says how to answer from elsewhere. */
export function announceQuestions(broker: QuestionBroker, write: (text: string) => void): () => void {
  return broker.onAsked((question) => {
    write(
      `question ${question.id}: "${terminalSafeText(question.question)}" waits for an answer, but there is no terminal to ask; ` +
        `it expires unanswered at ${question.expires_at}\n`,
    );
  });
}

function prompt(question: PendingQuestion): string {
  // The question and its choices are the agent's: shown, never obeyed by the terminal.
  const choices = (question.choices ?? []).map(
    (choice, index) => `  ${index + 1}. ${terminalSafeText(choice)}`,
  );
  return [`question ${question.id}: ${terminalSafeText(question.question)}`, ...choices, "answer › "].join(
    "\n",
  );
}

/** A typed number picks that choice; anything else is the answer as typed. */
function chosen(line: string, choices: readonly string[] | undefined): string {
  const text = line.trim();
  const index = /^\d+$/.test(text) ? Number(text) - 1 : -1;
  return choices?.[index] ?? text;
}
