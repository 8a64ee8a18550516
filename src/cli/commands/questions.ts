import type { Command } from "commander";
import { z } from "zod";
import { type ClientCommandIo, clientOf, processIo } from "../daemon-client.js";
import { terminalSafeText } from "../../util/terminal-safe-text.js";

const QuestionListSchema = z.object({
  questions: z.array(
    z.object({
      id: z.string(),
      agent: z.string(),
      run: z.string(),
      question: z.string(),
      choices: z.array(z.string()).optional(),
      expires_at: z.string(),
    }),
  ),
});

/** `agentd questions`: what runs asked with `ask_human` and still wait on. */
export function registerQuestionsCommand(program: Command, io: ClientCommandIo = processIo): void {
  program
    .command("questions")
    .description('list questions runs wait on (answer with agentd answer <id> "…")')
    .action(async (_options: unknown, command: Command) => {
      const { client, json } = clientOf(command, io);
      const { questions } = await client.get("/questions", QuestionListSchema);
      if (json) for (const question of questions) io.out(JSON.stringify(question));
      else if (questions.length === 0) io.out("no pending questions");
      else {
        for (const question of questions) {
          const choices = question.choices ? `  [${question.choices.join(" | ")}]` : "";
          io.out(
            terminalSafeText(
              `${question.id}  ${question.agent}  ${question.run}  ${question.question}${choices}  expires ${question.expires_at}`,
            ),
          );
        }
      }
    });
}
