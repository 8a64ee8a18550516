import type { ShellWord } from "../../permissions/shell-lexer.js";
import { programName, runsUnreadableCode } from "../../permissions/shell-programs.js";

interface OptionGrammar {
  /** Single-letter options that take a value, attached (`-uroot`) or as the next word. */
  valueLetters: string;
  /** Long options that take the next word as their value unless written `--name=value`. */
  valueLongOptions: string[];
  /** Letters and long options after which the wrapper runs something other than its words. */
  unsafeLetters: string;
  unsafeLongOptions: RegExp;
}

const SUDO: OptionGrammar = {
  valueLetters: "CDghpRrTtUu",
  valueLongOptions: [
    "--close-from",
    "--chdir",
    "--group",
    "--host",
    "--prompt",
    "--chroot",
    "--role",
    "--command-timeout",
    "--type",
    "--other-user",
    "--user",
  ],
  // -s/-i run the command through a shell, -e edits files, -l lists.
  unsafeLetters: "siel",
  unsafeLongOptions: /^--(shell|login|edit|list)/,
};

const XARGS: OptionGrammar = {
  valueLetters: "adEILnPs",
  valueLongOptions: [
    "--arg-file",
    "--delimiter",
    "--max-args",
    "--max-procs",
    "--max-chars",
    "--process-slot-var",
  ],
  unsafeLetters: "",
  unsafeLongOptions: /^$/,
};

/**
 * The command `sudo` or `xargs` runs, read past their options (`sudo -E -u deploy curl …` →
 * `curl …`), or undefined when it cannot be read with confidence (`sudo -s`, an unknown wrapper).
 */
export function commandAfterOptions(words: ShellWord[]): ShellWord[] | undefined {
  const program = programName((words[0] as ShellWord).text).toLowerCase();
  const grammar = program === "sudo" ? SUDO : program === "xargs" ? XARGS : undefined;
  if (!grammar) return undefined;
  let index = 1;
  while (index < words.length) {
    const text = (words[index] as ShellWord).text;
    if (text === "--") return nonEmpty(words.slice(index + 1));
    if (text.startsWith("--")) {
      if (grammar.unsafeLongOptions.test(text)) return undefined;
      index += grammar.valueLongOptions.includes(text) ? 2 : 1;
    } else if (text.startsWith("-") && text.length > 1) {
      const letters = [...text.slice(1)];
      const valueAt = letters.findIndex((letter) => grammar.valueLetters.includes(letter));
      const flags = valueAt === -1 ? letters : letters.slice(0, valueAt);
      if (flags.some((letter) => grammar.unsafeLetters.includes(letter))) return undefined;
      index += valueAt !== -1 && valueAt === letters.length - 1 ? 2 : 1;
    } else if (program === "sudo" && (words[index] as ShellWord).assignment !== undefined) {
      index++;
    } else {
      return nonEmpty(words.slice(index));
    }
  }
  return undefined;
}

/**
 * The commands of `find … -exec cmd … ;` (also `-execdir`, `-ok`, `-okdir`, ended by `+`), or
 * undefined when one is not terminated and cannot be read with confidence.
 */
export function findExecCommands(words: ShellWord[]): ShellWord[][] | undefined {
  const commands: ShellWord[][] = [];
  for (let index = 1; index < words.length; index++) {
    if (!/^-(exec|execdir|ok|okdir)$/.test((words[index] as ShellWord).text)) continue;
    const end = words.findIndex((word, at) => at > index && (word.text === ";" || word.text === "+"));
    if (end === -1 || end === index + 1) return undefined;
    commands.push(words.slice(index + 1, end));
    index = end;
  }
  return commands;
}

/**
 * The words an interpreter runs as code: the values of its inline-code options (`python3 -c CODE`,
 * `node --eval=CODE`, `perl -eCODE`), wherever they stand. Arguments of a script are data.
 */
export function interpreterCode(words: ShellWord[]): string[] {
  const program = words[0] as ShellWord;
  const code: string[] = [];
  for (let index = 1; index < words.length; index++) {
    const word = words[index] as ShellWord;
    const equals = word.text.indexOf("=");
    if (equals > 0 && isInlineCodeFlag(program, word.text.slice(0, equals))) {
      code.push(word.text.slice(equals + 1));
    } else if (word.text !== "-" && isInlineCodeFlag(program, word.text)) {
      // `-cCODE` or `-c CODE`: which one cannot be told from the word (`-command` is a flag of
      // pwsh), so both count as code.
      code.push(word.text.slice(2));
      const next = words[index + 1];
      if (next) code.push(next.text);
      index++;
    }
  }
  return code;
}

function isInlineCodeFlag(program: ShellWord, text: string): boolean {
  return runsUnreadableCode([program, { text, dynamic: false, glob: false, assignment: undefined }]);
}

function nonEmpty(words: ShellWord[]): ShellWord[] | undefined {
  return words.length > 0 ? words : undefined;
}
