import { AgentdError } from "../../errors/agentd-error.js";
import { commandKind, programBaseName } from "../../permissions/shell-command-kind.js";
import { SECRET_TEMPLATE } from "../../secrets/secret-template.js";
import type { ShellReading, ShellWord, TemplateSite } from "../../permissions/shell-reading.js";

const MAX_DEPTH = 12;
/** Commands looked at per call: runners of runners (`watch watch …`) branch at every word. */
const MAX_ANALYSES = 4_000;
/** Characters of a plain argument (`--token=…`, `user@host:path`): anything else may be code. */
const PLAIN_ARGUMENT = /^[A-Za-z0-9_\-.,:/@+=%~]*$/;

interface Found {
  name: string;
  where: string;
}

/**
 * Refuses (TOOL_BAD_ARGUMENTS) a command with a `{{secret:name}}` inside text that a program runs as
 * code — the script of `bash -c`, `eval`'s arguments, an interpreter's inline code, an awk or sed
 * program, a word a runner such as `ssh` or `watch` may run — where a variable reference would be
 * expanded first and its value parsed as code. Also refuses any template in a command that feeds
 * code to a program (`… | bash`, `bash <<EOF`, `. <(…)`, `eval "$(…)"`), since which heredoc, pipe
 * or substitution reaches it cannot be told with confidence; only a variable set for that very
 * program (`X={{secret:k}} bash <<EOF`) stays allowed: the value is then never parsed.
 */
export function refuseTemplatesInCode(reading: ShellReading): void {
  const budget = { left: MAX_ANALYSES };
  const sites = reading.templates;
  const fed: string[] = [];
  let safe = 0;
  for (const command of reading.commands) {
    const found = templateInCode(command.words, sites, 0, budget);
    if (found) throw refusal(found.name, found.where);
    const feeding = feedsOnCode(command.words, 0, budget);
    if (feeding) {
      fed.push(feeding);
      safe += sites.filter((site) =>
        command.assignments.some((assignment) => inside(site, assignment.word)),
      ).length;
    }
  }
  if (fed.length > 0 && sites.length > safe) {
    throw refusal(sites[0]?.name ?? "", `in a command that feeds code to ${fed[0]}`);
  }
}

function templateInCode(
  words: ShellWord[],
  sites: TemplateSite[],
  depth: number,
  budget: { left: number },
): Found | undefined {
  const inWords = (list: ShellWord[]) => sites.find((site) => list.some((word) => inside(site, word)));
  const any = inWords(words);
  if (!any) return undefined;
  if (--budget.left < 0 || depth > MAX_DEPTH)
    return { name: any.name, where: "in a command too complex to analyse" };
  const program = programBaseName(words[0]?.text ?? "");
  const kind = commandKind(words);
  const codeIn = (list: ShellWord[], where: string) => {
    const site = inWords(list);
    return site ? { name: site.name, where } : undefined;
  };
  switch (kind.kind) {
    case "plain":
      return undefined;
    case "shell":
      return kind.script
        ? codeIn([kind.script], `inside the script of ${program} -c`)
        : laterWords(words, sites, program, depth, budget);
    case "wrapper":
      return templateInCode(kind.inner, sites, depth + 1, budget);
    case "runner": {
      if (!kind.inner) return laterWords(words, sites, program, depth, budget);
      for (const inner of kind.inner) {
        const found = templateInCode(inner, sites, depth + 1, budget);
        if (found) return found;
      }
      return undefined;
    }
    case "interpreter":
      return program === "let"
        ? codeIn(words.slice(1), "in arithmetic")
        : codeIn(kind.code, `inside code given to ${program}`);
    case "text-code":
      // A program that can run commands runs what the template brings; else only code-like words count.
      return kind.runs
        ? codeIn(words.slice(1), `inside a program ${program} runs as commands`)
        : codeIn(kind.program.filter(notPlain(sites)), `inside a program ${program} runs`);
    case "state":
      return program === "eval"
        ? codeIn(words.slice(1), "inside an eval argument")
        : laterWords(words, sites, program, depth, budget);
  }
}

/** Every later word as the start of a command, and as code when it does not look like plain data. */
function laterWords(
  words: ShellWord[],
  sites: TemplateSite[],
  program: string,
  depth: number,
  budget: { left: number },
): Found | undefined {
  const codeLike = words.slice(1).filter(notPlain(sites));
  const site = sites.find((candidate) => codeLike.some((word) => inside(candidate, word)));
  if (site) return { name: site.name, where: `inside code given to ${program}` };
  for (let index = 1; index < words.length; index++) {
    const found = templateInCode(words.slice(index), sites, depth + 1, budget);
    if (found) return found;
  }
  return undefined;
}

/** A word holding a template whose text around it is not a plain argument. */
function notPlain(sites: TemplateSite[]) {
  return (word: ShellWord) => {
    if (!sites.some((site) => inside(site, word))) return false;
    return (
      word.dynamic || !PLAIN_ARGUMENT.test(word.text.replace(new RegExp(SECRET_TEMPLATE.source, "g"), ""))
    );
  };
}

/** The program that runs code fed to it (stdin, a substitution, a dynamic script), if this command has one. */
function feedsOnCode(words: ShellWord[], depth: number, budget: { left: number }): string | undefined {
  if (words.length === 0) return undefined;
  if (--budget.left < 0 || depth > MAX_DEPTH) return "a command too complex to analyse";
  const program = programBaseName(words[0]?.text ?? "");
  const kind = commandKind(words);
  switch (kind.kind) {
    case "plain":
    case "text-code":
      return undefined;
    case "shell":
      return kind.script === undefined || kind.script.dynamic ? program : undefined;
    case "interpreter":
    case "state":
      return kind.fed ? program : undefined;
    case "wrapper":
      return feedsOnCode(kind.inner, depth + 1, budget);
    case "runner": {
      const commands = kind.inner ?? words.slice(1).map((_word, index) => words.slice(index + 1));
      for (const command of commands) {
        const found = feedsOnCode(command, depth + 1, budget);
        if (found) return found;
      }
      return undefined;
    }
  }
}

function inside(site: TemplateSite, word: ShellWord): boolean {
  return site.start >= word.start && site.end <= word.end;
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
