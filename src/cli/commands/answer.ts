import type { Command } from "commander";
import { z } from "zod";
import { type ClientCommandIo, clientOf, processIo } from "../daemon-client.js";

/** What POST /questions/:id answers. */
const AnswerResponseSchema = z.object({ question: z.string(), run: z.string(), answer: z.string() });

/** `agentd answer <id> <answer>`: answers a question a run asked with `ask_human`. */
export function registerAnswerCommand(program: Command, io: ClientCommandIo = processIo): void {
  program
    .command("answer <id> <answer...>")
    .description("answer a question a run asked (agentd questions lists them)")
    .action(async (id: string, words: string[], _options: unknown, command: Command) => {
      const { client, json } = clientOf(command, io);
      const reply = await client.post(
        `/questions/${encodeURIComponent(id)}`,
        { answer: words.join(" ") },
        AnswerResponseSchema,
      );
      io.out(json ? JSON.stringify(reply) : `answered ${id}: ${reply.answer}`);
    });
}
