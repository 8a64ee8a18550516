import path from "node:path";
import type { ShellWord } from "./shell-reading.js";
import { isListedProgram, listedProgramKind } from "./shell-listed-options.js";
import { ownEntry } from "./shell-option-reading.js";
import {
  INTERPRETERS,
  RUNNERS,
  SENSITIVE_VARIABLES,
  SENSITIVE_VARIABLE_PREFIXES,
  SHELLS,
  SHELL_STATE_CHANGERS,
  SYSTEM_PROGRAM_FOLDERS,
  WRAPPERS,
} from "./shell-program-table.js";

/**
 * What a simple command does with the words after its program name, as far as a rule can tell.
 * `construct` is the start of the command that makes it risky (`git -c`, `bash -c`, `make`): an
 * allow rule that spells it out lifts the doubt.
 */
export type CommandKind =
  | { kind: "plain" }
  /** A wrapper read past its options: `inner` is the command it runs, `assignments` what `env` sets. */
  | { kind: "wrapper"; inner: ShellWord[]; assignments: ShellWord[] }
  /** A shell: `script` is its `-c` script, or undefined when it reads commands from a file or stdin. */
  | { kind: "shell"; script: ShellWord | undefined; construct: string }
  /** Runs commands it reads elsewhere; `inner` are the commands it runs when they can be read exactly. */
  | { kind: "runner"; reason: string; construct: string; inner: ShellWord[][] | undefined }
  /** An interpreter; `code` are the words it runs as code, `fed` when it reads its program from stdin. */
  | { kind: "interpreter"; code: ShellWord[]; fed: boolean; construct: string }
  /** awk or sed: `runs` when its program can run commands. */
  | {
      kind: "text-code";
      program: ShellWord[];
      runs: string | undefined;
      /** Commands the program is known to run (sed's `e cmd`, an awk program's strings): checked against deny and ask rules. */
      commands: string[];
      construct: string;
    }
  /** A builtin that changes how later commands run (`source`, `eval`, `alias`, `trap`…). */
  | { kind: "state"; fed: boolean; construct: string };

/** The base name of a command word, lowercased with a version suffix dropped: `/usr/bin/Python3.12` → `python`. */
export function programKey(word: string): string {
  const base = programBaseName(word).toLowerCase();
  if (isKnownProgram(base)) return base;
  // `python3.11`, `perl5.36-x86_64-linux-gnu`, `pdb3`, `vim.basic`: the program they are a version of.
  const versioned = /^([a-z][a-z-]*?)[0-9][0-9.]*(?:[-_.].*)?$/.exec(base)?.[1];
  if (versioned !== undefined && isKnownProgram(versioned)) return versioned;
  const dotted = base.split(".")[0] ?? base;
  return isKnownProgram(dotted) ? dotted : base;
}

function isKnownProgram(name: string): boolean {
  return (
    SHELLS.has(name) ||
    INTERPRETERS.has(name) ||
    RUNNERS.has(name) ||
    ownEntry(WRAPPERS, name) !== undefined ||
    isListedProgram(name) ||
    SHELL_STATE_CHANGERS.has(name)
  );
}

/** The base name of a command word: `/usr/bin/rm` and `./rm` run rm. */
export function programBaseName(word: string): string {
  const base = word.replace(/\/+$/, "").split("/").pop();
  return base === undefined || base === "" ? word : base;
}

/** Whether a command word names a program by a path outside the system's program folders. */
export function isUnknownPath(word: string): boolean {
  if (!word.includes("/")) return false;
  if (!word.startsWith("/")) return true;
  return !SYSTEM_PROGRAM_FOLDERS.includes(path.posix.dirname(path.posix.normalize(word)));
}

/** Whether setting this variable changes which program runs, or hands code to one. */
export function isSensitiveVariable(name: string): boolean {
  const upper = name.toUpperCase();
  return (
    SENSITIVE_VARIABLES.has(upper) || SENSITIVE_VARIABLE_PREFIXES.some((prefix) => upper.startsWith(prefix))
  );
}

const STDIN_PATH = /^(-|\/dev\/stdin|\/dev\/fd\/.*|\/proc\/self\/fd\/.*|\/proc\/\d+\/fd\/.*)$/;
const ASSIGNMENT = /^[A-Za-z_][A-Za-z0-9_]*=/;

/** Classifies a simple command by its program (the table of shell-program-table.ts) and options. */
export function commandKind(words: ShellWord[]): CommandKind {
  const first = words[0];
  if (!first) return { kind: "plain" };
  const program = programKey(first.text);
  if (SHELLS.has(program)) return shellKind(words, program);
  const wrapper = ownEntry(WRAPPERS, program);
  if (wrapper) {
    const unwrapped = unwrap(words, program);
    if (unwrapped) return unwrapped;
    return {
      kind: "runner",
      reason: `${program} runs a command the check cannot read`,
      construct: program,
      inner: undefined,
    };
  }
  if (program === "sudo" || program === "xargs" || program === "doas") {
    const inner = commandAfterOptions(words, program);
    return {
      kind: "runner",
      reason:
        program === "xargs"
          ? "xargs runs a command with arguments read from stdin"
          : `${program} runs a command with other privileges`,
      construct: program,
      inner: inner ? [inner] : undefined,
    };
  }
  if (RUNNERS.has(program)) {
    return {
      kind: "runner",
      reason: `${program} runs commands the check cannot read`,
      construct: program,
      inner: undefined,
    };
  }
  if (INTERPRETERS.has(program)) return interpreterKind(words, program);
  if (SHELL_STATE_CHANGERS.has(program)) {
    const rest = words.slice(1);
    const fed =
      program === "eval"
        ? rest.some((word) => word.dynamic)
        : (program === "source" || program === ".") &&
          rest.some((word) => word.dynamic || STDIN_PATH.test(word.text));
    return { kind: "state", fed, construct: program };
  }
  return listedProgramKind(words, program) ?? { kind: "plain" };
}

function shellKind(words: ShellWord[], program: string): CommandKind {
  let wantsScript = false;
  for (let index = 1; index < words.length; index++) {
    const text = (words[index] as ShellWord).text;
    if (text === "--" || text === "-") {
      return {
        kind: "shell",
        script: wantsScript ? words[index + 1] : undefined,
        construct: `${program} -c`,
      };
    }
    if (/^[-+][oO]$/.test(text)) {
      index++;
      continue;
    }
    if (/^[-+][A-Za-z]+$/.test(text)) {
      if (text.startsWith("-") && text.includes("c")) wantsScript = true;
      continue;
    }
    if (text.startsWith("--")) continue;
    return { kind: "shell", script: wantsScript ? words[index] : undefined, construct: `${program} -c` };
  }
  return { kind: "shell", script: undefined, construct: program };
}

/** Interpreter options whose value (attached or next) is inline code. */
const INLINE_CODE_OPTION =
  /^(-[ceErpM]|-[A-Za-z]*[ceE]$|--eval|--print|--command|-command|-encodedcommand|-ec|--import|--require|-r|eval)$/i;

function interpreterKind(words: ShellWord[], program: string): CommandKind {
  const code: ShellWord[] = [];
  let operand: ShellWord | undefined;
  for (let index = 1; index < words.length; index++) {
    const word = words[index] as ShellWord;
    const equals = word.text.indexOf("=");
    const option = equals > 0 && word.text.startsWith("-") ? word.text.slice(0, equals) : word.text;
    if (word.text.startsWith("-") && word.text !== "-") {
      // `-cCODE`, `-c CODE`, `--eval=CODE`: which one cannot be told from the word alone, so both count.
      if (INLINE_CODE_OPTION.test(option) || /^-[A-Za-z]*[ceE]/.test(word.text)) {
        code.push(word);
        const next = words[index + 1];
        if (next && equals === -1) {
          code.push(next);
          index++;
        }
      }
      continue;
    }
    operand = word;
    break;
  }
  const fed =
    code.length === 0 && (operand === undefined || operand.dynamic || STDIN_PATH.test(operand.text));
  return { kind: "interpreter", code, fed, construct: program };
}

function unwrap(words: ShellWord[], program: string): CommandKind | undefined {
  const grammar = ownEntry(WRAPPERS, program);
  if (!grammar) return undefined;
  const assignments: ShellWord[] = [];
  let index = 1;
  while (index < words.length) {
    const word = words[index] as ShellWord;
    if (word.dynamic) return undefined;
    if (word.text === "--") {
      index++;
      break;
    }
    if (word.text.startsWith("-") && word.text.length > 1) {
      const name = word.text.includes("=") ? word.text.slice(0, word.text.indexOf("=")) : word.text;
      if (grammar.valueOptions.includes(name)) index += word.text.includes("=") ? 1 : 2;
      else if (grammar.flagOptions.includes(word.text)) index++;
      else return undefined;
      continue;
    }
    if (grammar.assignments && ASSIGNMENT.test(word.text)) {
      assignments.push(word);
      index++;
      continue;
    }
    break;
  }
  index += grammar.positionals;
  const inner = words.slice(index);
  if (program === "command" && words.some((word) => /^-[vV]$/.test(word.text)))
    return { kind: "wrapper", inner: [], assignments };
  return { kind: "wrapper", inner, assignments };
}

interface OptionGrammar {
  valueLetters: string;
  valueLongOptions: readonly string[];
  /** Letters and long options after which the wrapper runs something other than its words. */
  unsafe: RegExp;
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
  unsafe: /^-[A-Za-z]*[siel]|^--(shell|login|edit|list)/,
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
  unsafe: /^(-i|--replace)/,
};

/** The command `sudo` or `xargs` runs, read past their options, or undefined when not read exactly. */
function commandAfterOptions(words: ShellWord[], program: string): ShellWord[] | undefined {
  const grammar = program === "xargs" ? XARGS : SUDO;
  let index = 1;
  while (index < words.length) {
    const word = words[index] as ShellWord;
    const text = word.text;
    if (word.dynamic) return undefined;
    if (text === "--") return nonEmpty(words.slice(index + 1));
    if (grammar.unsafe.test(text)) return undefined;
    if (text.startsWith("--")) {
      index += grammar.valueLongOptions.includes(text) ? 2 : 1;
    } else if (text.startsWith("-") && text.length > 1) {
      const letters = [...text.slice(1)];
      const valueAt = letters.findIndex((letter) => grammar.valueLetters.includes(letter));
      index += valueAt !== -1 && valueAt === letters.length - 1 ? 2 : 1;
    } else if (program !== "xargs" && ASSIGNMENT.test(text)) {
      index++;
    } else {
      return nonEmpty(words.slice(index));
    }
  }
  return undefined;
}

function nonEmpty(words: ShellWord[]): ShellWord[] | undefined {
  return words.length > 0 ? words : undefined;
}
