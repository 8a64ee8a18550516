import { programBaseName } from "./shell-command-kind.js";
import type { ShellWord } from "./shell-reading.js";

/*
 * Words bash turns into code although they are plain text to a rule. Bash evaluates an array
 * subscript as arithmetic wherever it meets a variable name (`a[$(cmd)]`, also single-quoted, since
 * the builtin parses the name again), and arithmetic expands `$(…)` and follows variable names to
 * their values, which are evaluated in turn (`x='a[$(cmd)]'; test -v 'b[x]'`). Every value given
 * to a variable declared integer is arithmetic. So a name with a subscript, in any builtin that
 * takes variable names, and any attribute that makes values arithmetic or names references, is
 * code. Each was run through bash 5.2 (test/tools/shell-code-classes.test.ts).
 */

/**
 * Variables bash itself keeps as integers: a value given to one is evaluated as arithmetic
 * (`RANDOM='a[$(cmd)]'` runs cmd), whichever builtin or assignment sets it.
 */
export const INTEGER_VARIABLES: ReadonlySet<string> = new Set([
  "RANDOM",
  "SRANDOM",
  "OPTIND",
  "OPTERR",
  "HISTCMD",
  "SECONDS",
  "LINENO",
  "EPOCHSECONDS",
  "EPOCHREALTIME",
  "BASHPID",
  "BASH_SUBSHELL",
]);

/** Builtins whose arguments are variable names or `name=value` (bash re-parses them). */
const DECLARATIONS = new Set(["declare", "typeset", "local", "export", "readonly"]);
/** Attribute letters of `declare` that leave values as text: print, functions, global, read-only, export, case, trace. */
const HARMLESS_ATTRIBUTES = /^[-+][pfFgrxlut]+$/;
/** Builtins whose every non-option argument may be a variable name. */
const NAME_TAKERS = new Set(["read", "unset", "getopts", "wait", "mapfile", "readarray"]);

/** Why this simple command has bash evaluate a word as code, one reason per word; empty when none. */
export function arithmeticDoubts(words: ShellWord[]): string[] {
  const first = words[0];
  if (!first) return [];
  const program = programBaseName(first.text).toLowerCase();
  const reasons: string[] = [];
  const subscripted = (word: ShellWord, what: string, name = word.text.split("=")[0] ?? "") => {
    const bare = name.replace(/\+$/, "");
    if (name.includes("[")) {
      reasons.push(
        `${program} ${what} ${word.text}, whose index bash evaluates as arithmetic, which can run code`,
      );
    } else if (INTEGER_VARIABLES.has(bare)) {
      reasons.push(
        `${program} ${what} ${bare}, whose values bash evaluates as arithmetic, which can run code`,
      );
    }
  };
  if (DECLARATIONS.has(program)) {
    let options = true;
    for (const word of words.slice(1)) {
      if (options && word.text === "--") options = false;
      else if (options && /^[-+]/.test(word.text)) {
        if (!HARMLESS_ATTRIBUTES.test(word.text)) {
          reasons.push(
            `${program} ${word.text} gives an attribute (-i integer, -n reference, -a/-A array) under which bash evaluates values as code`,
          );
        }
      } else subscripted(word, "names");
    }
  } else if (NAME_TAKERS.has(program)) {
    // `read -p 'x[y]'` asks too: telling a prompt from a name is not worth a miss.
    for (const word of words.slice(1)) subscripted(word, "names", word.text);
  } else if (program === "printf") {
    words.forEach((word, index) => {
      if (word.text === "-v") {
        const target = words[index + 1];
        if (target) subscripted(target, "-v sets");
      } else if (/^-v./.test(word.text)) {
        subscripted({ ...word, text: word.text.slice(2) }, "-v sets");
      }
    });
  } else if (program === "test" || program === "[") {
    words.forEach((word, index) => {
      const operand = words[index + 1];
      if ((word.text === "-v" || word.text === "-R") && operand) subscripted(operand, `${word.text} reads`);
    });
  }
  return reasons;
}
