import { AgentdError } from "../../errors/agentd-error.js";
import { type ShellSimpleCommand, type ShellWord, parseShellScript } from "../../permissions/shell-lexer.js";
import {
  SHELL_KEYWORDS,
  programKind,
  programName,
  runsUnreadableCode,
  shellScriptArgument,
  wrappedCommand,
} from "../../permissions/shell-programs.js";
import { SECRET_TEMPLATE } from "../../secrets/secret-template.js";
import { commandsFedCode } from "./shell-stdin-code.js";
import { commandAfterOptions, findExecCommands, interpreterCode } from "./shell-wrapped-commands.js";

const MAX_DEPTH = 12;
/** Commands looked at per call: wrappers of wrappers (`sudo sudo …`) branch at every word. */
const MAX_ANALYSES = 4_000;
/** awk and sed: their program is a plain word, not the value of an option. */
const TEXT_CODE_RUNNER = /^[gmn]?awk$|^g?sed$/i;
/** Characters of a plain argument (`--token=…`, `user@host:path`): anything else may be code. */
const PLAIN_ARGUMENT = /^[A-Za-z0-9_\-.,:/@+=%~]*$/;

/**
 * Refuses (TOOL_BAD_ARGUMENTS) a command with a `{{secret:name}}` inside text that a program runs as
 * code: the script of `bash -c` (any shell), the arguments of `eval`, and code-like arguments of
 * the programs the permission check knows run code (`ssh host '…'`, `watch '…'`, `python -c '…'`,
 * `trap '…'`). A variable reference there would be expanded first and its value parsed as code.
 */
export function refuseTemplatesInCode(command: string): void {
  if (!new RegExp(SECRET_TEMPLATE.source).test(command)) return;
  const { commands } = parseShellScript(command);
  const budget = { left: MAX_ANALYSES };
  for (const { words } of commands) {
    const found = templateInCode(words, 0, budget);
    if (found) throw refusal(found.name, found.where);
  }
  refuseTemplatesFedAsCode(command, commands);
}

/**
 * Refuses a template anywhere in a command that also feeds code to a program (`… | bash`,
 * `bash <<EOF`, `. <(…)`, `eval "$(…)"`): which heredoc, pipe or substitution reaches that program
 * cannot be told with confidence, and a value that does is run as code. Only a variable set for
 * that very program (`X={{secret:k}} bash <<EOF`) stays allowed: the value is then never parsed.
 */
function refuseTemplatesFedAsCode(command: string, commands: ShellSimpleCommand[]): void {
  const fed = commandsFedCode(commands);
  const first = fed[0];
  if (!first) return;
  const countIn = (text: string) => text.match(globalTemplate())?.length ?? 0;
  const safe = fed
    .flatMap(({ prefixAssignments }) => prefixAssignments)
    .reduce((sum, word) => sum + countIn(word.text), 0);
  if (countIn(command) > safe) {
    throw refusal(templateName(command) ?? "", `in a command that feeds code to ${first.program}`);
  }
}

interface TemplateInCode {
  name: string;
  where: string;
}

interface Budget {
  left: number;
}

function templateInCode(allWords: ShellWord[], depth: number, budget: Budget): TemplateInCode | undefined {
  const name = templateName(allWords.map((word) => word.text).join(" "));
  if (name === undefined) return undefined;
  if (--budget.left < 0 || depth > MAX_DEPTH) return { name, where: "in a command too complex to analyse" };
  let words = allWords;
  while (words[0] && (SHELL_KEYWORDS.has(words[0].text) || words[0].assignment !== undefined)) {
    words = words.slice(1);
  }
  const nameWord = words[0];
  if (!nameWord) return undefined;
  const program = programName(nameWord.text);
  switch (programKind(program)) {
    case "shell": {
      const name = templateName(shellScriptArgument(words) ?? "");
      return name === undefined ? undefined : { name, where: `inside the script of ${program} -c` };
    }
    case "eval": {
      const name = templateName(
        words
          .slice(1)
          .map((word) => word.text)
          .join(" "),
      );
      return name === undefined ? undefined : { name, where: "inside an eval argument" };
    }
    case "transparent": {
      const inner = wrappedCommand(words);
      return inner ? templateInCode(inner, depth + 1, budget) : inLaterWords(words, program, depth, budget);
    }
    case "opaque": {
      const inner = commandAfterOptions(words);
      if (inner) return templateInCode(inner, depth + 1, budget);
      const executed = program.toLowerCase() === "find" ? findExecCommands(words) : undefined;
      if (!executed) return inLaterWords(words, program, depth, budget);
      for (const command of executed) {
        const found = templateInCode(command, depth + 1, budget);
        if (found) return found;
      }
      return undefined;
    }
    case "interpreter": {
      if (TEXT_CODE_RUNNER.test(program)) {
        // A program that runs commands (sed's `e`, awk's system()) runs what the template brings.
        const running = words
          .slice(1)
          .find((word) => templateName(word.text) && runsUnreadableCode([nameWord, word]));
        if (running)
          return {
            name: templateName(running.text) ?? "",
            where: `inside a program ${program} runs as commands`,
          };
        return inLaterWords(words, program, depth, budget);
      }
      const name = interpreterCode(words)
        .map(templateName)
        .find((found) => found !== undefined);
      return name === undefined ? undefined : { name, where: `inside code given to ${program}` };
    }
    case "state":
      return inLaterWords(words, program, depth, budget);
    case "declaration":
    case "plain":
      return undefined;
  }
}

/** Every later word as the start of a command, and as code when it looks like code. */
function inLaterWords(
  words: ShellWord[],
  program: string,
  depth: number,
  budget: Budget,
): TemplateInCode | undefined {
  for (let index = 1; index < words.length; index++) {
    const text = (words[index] as ShellWord).text;
    const name = templateName(text);
    if (name !== undefined && !PLAIN_ARGUMENT.test(text.replace(globalTemplate(), ""))) {
      return { name, where: `inside code given to ${program}` };
    }
    const found = templateInCode(words.slice(index), depth + 1, budget);
    if (found) return found;
  }
  return undefined;
}

function templateName(text: string): string | undefined {
  return new RegExp(SECRET_TEMPLATE.source).exec(text)?.[1];
}

function globalTemplate(): RegExp {
  return new RegExp(SECRET_TEMPLATE.source, "g");
}

function refusal(name: string, where: string): AgentdError {
  return new AgentdError(
    "TOOL_BAD_ARGUMENTS",
    `{{secret:${name}}} cannot be used ${where}: its value would be run as code`,
    {
      hint: `pass it in a variable and quote the variable in the code: X={{secret:${name}}} bash -c 'use "$X"'`,
    },
  );
}
