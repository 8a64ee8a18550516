import { GIT_GLOBAL_OPTIONS, GIT_SUBCOMMANDS } from "./git-option-table.js";
import { sedScriptCommands, sedScriptRuns } from "./sed-script.js";
import type { CommandKind } from "./shell-command-kind.js";
import {
  type OptionReading,
  type OptionTable,
  optionArity,
  ownEntry,
  readOptions,
} from "./shell-option-reading.js";
import { OPTION_TABLES, OPTION_TABLE_ALIASES } from "./shell-option-table.js";
import type { ShellWord } from "./shell-reading.js";

/** What in an awk program can run a command: `system()`, pipes (`|`, not `||`), `getline`, `@` directives and indirect calls. */
const AWK_CODE = /system|getline|(?<!\|)\|(?!\|)|@/;
/** A string constant of an awk program, with its escapes. */
const AWK_STRING = /"((?:[^"\\\n]|\\.)*)"/g;
const FIND_EXEC = /^-(exec|execdir|ok|okdir)$/;

/** The option table of a program, by its key or an alias (`gawk` reads as `awk`). */
export function optionTableFor(program: string): OptionTable | undefined {
  return (
    ownEntry(OPTION_TABLES, program) ?? ownEntry(OPTION_TABLES, ownEntry(OPTION_TABLE_ALIASES, program) ?? "")
  );
}

/** Whether the option tables list this program (git included). */
export function isListedProgram(program: string): boolean {
  return program === "git" || optionTableFor(program) !== undefined;
}

/**
 * How a listed program's words are judged: each option must be in its allow-list, the script of
 * sed and awk must not run commands, the commands of `find -exec` are read out. Undefined for a
 * program the tables do not list.
 */
export function listedProgramKind(words: ShellWord[], program: string): CommandKind | undefined {
  if (program === "git") return gitKind(words);
  const table = optionTableFor(program);
  if (!table) return undefined;
  const base = ownEntry(OPTION_TABLE_ALIASES, program) ?? program;
  if (base === "find") return findKind(words, table);
  const reading = readOptions(words, table);
  if (reading.unknown) return unknownOption(words, program, table, reading.unknown);
  if (base === "sed" || base === "awk") return textCodeKind(words, program, base, reading);
  if (base === "tar") return tarKind(program, reading);
  return { kind: "plain" };
}

function unknownOption(
  words: ShellWord[],
  label: string,
  table: OptionTable,
  unknown: { index: number; option: string },
): CommandKind {
  const why = ownEntry(table.runs, unknown.option) ?? table.risk;
  return {
    kind: "runner",
    reason: `${label} ${unknown.option} is not an option known to be harmless (${why})`,
    construct: [
      (words[0]?.text ?? "").split("/").pop() ?? label,
      ...words.slice(1, unknown.index + 1).map((word) => word.text),
    ].join(" "),
    inner: undefined,
  };
}

function gitKind(words: ShellWord[]): CommandKind {
  const global = readOptions(words, GIT_GLOBAL_OPTIONS);
  if (global.unknown) return unknownOption(words, "git", GIT_GLOBAL_OPTIONS, global.unknown);
  if (global.firstOperand === undefined) return { kind: "plain" };
  const name = (words[global.firstOperand] as ShellWord).text;
  const table = ownEntry(GIT_SUBCOMMANDS, name);
  if (!table) {
    return {
      kind: "runner",
      reason: `git ${name} is not a subcommand known to be harmless (it, or an alias of that name, may run programs)`,
      construct: ["git", ...words.slice(1, global.firstOperand + 1).map((word) => word.text)].join(" "),
      inner: undefined,
    };
  }
  const reading = readOptions(words, table, global.firstOperand + 1);
  if (reading.unknown) return unknownOption(words, `git ${name}`, table, reading.unknown);
  return { kind: "plain" };
}

/** sed and awk: the script (the `-e` values, else the first operand) is checked for what runs commands. */
function textCodeKind(
  words: ShellWord[],
  program: string,
  base: string,
  reading: OptionReading,
): CommandKind {
  const scriptOptions = base === "sed" ? ["-e", "--expression"] : ["-e", "--source"];
  const given = reading.options.filter((option) => scriptOptions.includes(option.name));
  const scripts =
    given.length > 0 ? given.map((option) => option.value ?? "") : [reading.operands[0]?.text ?? ""];
  const script = scripts.join("\n");
  const runs = base === "sed" ? sedScriptRuns(script) : scripts.some((text) => AWK_CODE.test(text));
  return {
    kind: "text-code",
    program: words.slice(1),
    runs: runs ? `${program}'s program can run commands` : undefined,
    commands: !runs ? [] : base === "sed" ? sedScriptCommands(script) : awkStrings(script),
    construct: program,
  };
}

/** An escape in an awk string: octal (`\155`), hexadecimal (`\x6d`), or one character. */
const AWK_ESCAPE = /\\([0-7]{1,3}|x[0-9a-fA-F]{1,2}|.)/g;
const AWK_CHARACTER_ESCAPES: Readonly<Record<string, string>> = { n: "\n", t: "\t", r: "\r" };

/** What one escape stands for, as awk reads it: `"r\155 x"` is `rm x` to `system`. */
function awkEscaped(_escape: string, body: string): string {
  if (/^[0-7]/.test(body)) return String.fromCharCode(Number.parseInt(body, 8));
  if (body.length > 1) return String.fromCharCode(Number.parseInt(body.slice(1), 16));
  return AWK_CHARACTER_ESCAPES[body] ?? body;
}

/**
 * The string constants of an awk program that runs commands, each and all joined: any may be the
 * command given to `system`, a pipe or `getline` (`cmd = "rm x"; system(cmd)`), so each meets the
 * deny rules. A command assembled some other way (`sprintf("%c", 114)`) is the sandbox's to stop.
 */
function awkStrings(script: string): string[] {
  const strings = [...script.matchAll(AWK_STRING)].map((match) =>
    (match[1] ?? "").replace(AWK_ESCAPE, awkEscaped),
  );
  // Pieces put together (`"r" "m x"`) make one command too.
  return strings.length > 1 ? [...strings, strings.join("")] : strings;
}

/** tar: an archive named `host:file` makes tar run a remote shell with that host. */
function tarKind(program: string, reading: OptionReading): CommandKind {
  const local = reading.options.some((option) => option.name === "--force-local");
  const remote = reading.options.find(
    (option) => (option.name === "-f" || option.name === "--file") && /^[^/]*:/.test(option.value ?? ""),
  );
  if (!remote || local) return { kind: "plain" };
  return {
    kind: "runner",
    reason: `${program} reads the archive ${remote.value ?? ""} as host:file and runs a remote shell for it`,
    construct: program,
    inner: undefined,
  };
}

/** find: every predicate must be known; the commands of `-exec`, `-execdir`, `-ok`, `-okdir` are read out. */
function findKind(words: ShellWord[], table: OptionTable): CommandKind {
  const commands: ShellWord[][] = [];
  let ended = true;
  for (let index = 1; index < words.length; index++) {
    const text = (words[index] as ShellWord).text;
    if (FIND_EXEC.test(text)) {
      const end = words.findIndex((word, at) => at > index && (word.text === ";" || word.text === "+"));
      if (end === -1 || end === index + 1) {
        ended = false;
        break;
      }
      commands.push(words.slice(index + 1, end));
      index = end;
      continue;
    }
    if (!text.startsWith("-") || text === "-") continue;
    const arity = optionArity(table, text);
    if (arity === undefined) return unknownOption(words, "find", table, { index, option: text });
    if (arity === "value") index++;
  }
  if (ended && commands.length === 0) return { kind: "plain" };
  return {
    kind: "runner",
    reason: "find runs a command for each file it finds",
    construct: "find",
    inner: ended ? commands : undefined,
  };
}
