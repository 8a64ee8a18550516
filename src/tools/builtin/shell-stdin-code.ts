import type { ShellSimpleCommand, ShellWord } from "../../permissions/shell-lexer.js";
import {
  SHELL_KEYWORDS,
  programKind,
  programName,
  shellScriptArgument,
  wrappedCommand,
} from "../../permissions/shell-programs.js";

const MAX_DEPTH = 12;
/** Commands looked at per call: opaque wrappers of wrappers (`sudo sudo …`) branch at every word. */
const MAX_ANALYSES = 4_000;

/** Paths through which a program reads what was fed to it: its stdin or a process substitution. */
const FED_INPUT = /^(-|\/dev\/stdin|\/dev\/fd\/.*|\/proc\/self\/fd\/.*)$/;

/** Interpreter flags that give code inline (the code is then not read from stdin). */
const INLINE_CODE_FLAG = /^(-[ceEpr]|--eval|--print|-command|eval)$/i;

/** A command that runs code fed to it, and the variables its own prefix assigns (`X=… bash`). */
export interface CodeFedCommand {
  program: string;
  prefixAssignments: ShellWord[];
}

/**
 * The commands in `commands` that run code they are fed rather than code given in their words: a
 * shell or interpreter reading a script from stdin (`bash`, `cat x | sh`, `python3 -`), from a
 * process substitution (`bash <(…)`), `source`/`.` of stdin or a substitution, or `eval` of an
 * expansion (`eval "$(…)"`). A template in a heredoc, here-string, pipe or substitution may reach
 * such a program as code. Over-approximates: wrappers are looked through, opaque ones word by word.
 */
export function commandsFedCode(commands: ShellSimpleCommand[]): CodeFedCommand[] {
  const found: CodeFedCommand[] = [];
  const budget = { left: MAX_ANALYSES };
  for (const { words } of commands) {
    const start = words.findIndex((word) => word.assignment === undefined && !SHELL_KEYWORDS.has(word.text));
    if (start === -1) continue;
    const program = feedsOnCode(words.slice(start), 0, budget);
    if (program) found.push({ program, prefixAssignments: words.slice(0, start) });
  }
  return found;
}

function feedsOnCode(command: ShellWord[], depth: number, budget: { left: number }): string | undefined {
  const first = command[0];
  if (!first) return undefined;
  // Too deep or too many to analyse: assume the worst.
  if (--budget.left < 0 || depth > MAX_DEPTH) return "a command too complex to analyse";
  const program = programName(first.text);
  const rest = command.slice(1);
  switch (programKind(program)) {
    case "shell": {
      const script = shellScriptArgument(command);
      if (script !== undefined) return hasExpansion(script) ? program : undefined;
      const operand = rest.find((word) => !word.text.startsWith("-") && !word.text.startsWith("+"));
      return operand === undefined || readsFedInput(operand) || rest.some((word) => /^-\w*s/.test(word.text))
        ? program
        : undefined;
    }
    case "interpreter": {
      if (rest.some((word) => INLINE_CODE_FLAG.test(word.text))) return undefined;
      const operand = rest.find((word) => !word.text.startsWith("-") || word.text === "-");
      return operand === undefined || readsFedInput(operand) ? program : undefined;
    }
    case "state":
      return rest.some(readsFedInput) ? program : undefined;
    case "eval":
      return rest.some((word) => word.dynamic) ? program : undefined;
    case "transparent": {
      const inner = wrappedCommand(command);
      return inner ? feedsOnCode(inner, depth + 1, budget) : undefined;
    }
    case "opaque":
      for (let index = 1; index < command.length; index++) {
        const found = feedsOnCode(command.slice(index), depth + 1, budget);
        if (found) return found;
      }
      return undefined;
    case "declaration":
    case "plain":
      return undefined;
  }
}

function readsFedInput(word: ShellWord): boolean {
  return word.dynamic || FED_INPUT.test(word.text);
}

function hasExpansion(script: string): boolean {
  return /\$\(…\)|`|<\(…\)/.test(script);
}
