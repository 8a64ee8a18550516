import type { ShellWord } from "./shell-lexer.js";

/** Shells: `<shell> -c '<script>'` is checked as the script; a shell reading a file or stdin is a doubt. */
const SHELLS = new Set([
  "sh",
  "bash",
  "rbash",
  "zsh",
  "dash",
  "ksh",
  "ksh93",
  "mksh",
  "pdksh",
  "oksh",
  "ash",
  "yash",
  "posh",
  "fish",
  "csh",
  "tcsh",
]);

interface WrapperSpecification {
  /** Options that take the next word as their value. */
  valueOptions: string[];
  /** Positional words before the wrapped command (the duration of `timeout`). */
  positionals: number;
}

/** Wrappers that run the rest of their words as a command, changing nothing a rule cares about. */
const TRANSPARENT_WRAPPERS: Record<string, WrapperSpecification> = {
  env: { valueOptions: ["-u", "--unset", "-C", "--chdir"], positionals: 0 },
  command: { valueOptions: [], positionals: 0 },
  builtin: { valueOptions: [], positionals: 0 },
  exec: { valueOptions: ["-a"], positionals: 0 },
  nice: { valueOptions: ["-n", "--adjustment"], positionals: 0 },
  nohup: { valueOptions: [], positionals: 0 },
  time: { valueOptions: ["-f", "--format", "-o", "--output"], positionals: 0 },
  timeout: { valueOptions: ["-s", "--signal", "-k", "--kill-after"], positionals: 1 },
  gtimeout: { valueOptions: ["-s", "--signal", "-k", "--kill-after"], positionals: 1 },
  stdbuf: { valueOptions: ["-i", "-o", "-e", "--input", "--output", "--error"], positionals: 0 },
  setsid: { valueOptions: [], positionals: 0 },
  ionice: { valueOptions: ["-c", "--class", "-n", "--classdata"], positionals: 0 },
  unbuffer: { valueOptions: [], positionals: 0 },
};

/**
 * Programs that run other commands in ways a rule cannot see in full (privileges, stdin, remote
 * hosts, containers, package runners). Every later word is also checked as the start of a command
 * and as a script, so `sudo rm`, `xargs rm`, `find -exec rm`, `watch 'rm x'` meet the deny rules.
 */
const OPAQUE_WRAPPERS = new Set([
  "sudo",
  "doas",
  "su",
  "runuser",
  "pkexec",
  "sg",
  "xargs",
  "find",
  "busybox",
  "toybox",
  "strace",
  "ltrace",
  "watch",
  "flock",
  "chroot",
  "unshare",
  "nsenter",
  "script",
  "parallel",
  "caffeinate",
  "fakeroot",
  "firejail",
  "proxychains",
  "proxychains4",
  "torsocks",
  "systemd-run",
  "chrt",
  "taskset",
  "ssh",
  "docker",
  "podman",
  "kubectl",
  "npx",
  "bunx",
  "uvx",
  "uv",
  "poetry",
  "pipx",
  "bundle",
]);

/** Interpreters and the flags that give them code inline. */
const INTERPRETERS: Record<string, string[]> = {
  python: ["-c"],
  perl: ["-e", "-E"],
  ruby: ["-e"],
  node: ["-e", "--eval", "-p", "--print"],
  nodejs: ["-e", "--eval", "-p", "--print"],
  deno: ["eval"],
  bun: ["-e", "--eval"],
  php: ["-r"],
  lua: ["-e"],
  luajit: ["-e"],
  rscript: ["-e"],
  osascript: ["-e"],
  pwsh: ["-c", "-command", "-encodedcommand", "-e", "-ec"],
  powershell: ["-c", "-command", "-encodedcommand", "-e", "-ec"],
  expect: ["-c"],
  tclsh: [],
  irb: [],
};

/** Text tools that can run commands from their program: awk's `system()` and pipes, sed's `e`. */
const CODE_RUNNERS: Record<string, RegExp> = {
  awk: /system|getline|\||>/,
  gawk: /system|getline|\||>/,
  mawk: /system|getline|\||>/,
  nawk: /system|getline|\||>/,
  sed: /\/[gpiImM0-9]*e|(^|[;{\n])\s*e(\s|$)/,
  gsed: /\/[gpiImM0-9]*e|(^|[;{\n])\s*e(\s|$)/,
};

/** Builtins that change what later names mean or run code later: never allowed without asking. */
const SHELL_STATE_CHANGERS = new Set([
  "source",
  ".",
  "alias",
  "trap",
  "hash",
  "enable",
  "shopt",
  "fc",
  "bind",
  "complete",
  "compgen",
  "coproc",
]);

/** Builtins that declare variables: risky only for a sensitive variable or a function (`-f`). */
const DECLARATIONS = new Set(["declare", "typeset", "export", "readonly", "local"]);

/** Variables whose assignment changes which program a name runs, or runs code. */
export const SENSITIVE_VARIABLES = new Set([
  "PATH",
  "IFS",
  "ENV",
  "BASH_ENV",
  "SHELLOPTS",
  "BASHOPTS",
  "PS4",
  "PROMPT_COMMAND",
  "LD_PRELOAD",
  "LD_LIBRARY_PATH",
  "LD_AUDIT",
  "DYLD_INSERT_LIBRARIES",
  "DYLD_LIBRARY_PATH",
  "BASH_LOADABLES_PATH",
  "GLOBIGNORE",
  "CDPATH",
]);

/** Words that start or end a compound command rather than name a program. */
export const SHELL_KEYWORDS = new Set([
  "!",
  "{",
  "}",
  "if",
  "then",
  "else",
  "elif",
  "fi",
  "do",
  "done",
  "while",
  "until",
  "esac",
  "[[",
  "]]",
]);

export type ProgramKind =
  "shell" | "eval" | "transparent" | "opaque" | "interpreter" | "state" | "declaration" | "plain";

/** The kind of program a command name runs (the base name, case folded: `/BIN/RM` on macOS is rm). */
export function programKind(program: string): ProgramKind {
  const name = program.toLowerCase();
  if (SHELLS.has(name)) return "shell";
  if (name === "eval") return "eval";
  if (name in TRANSPARENT_WRAPPERS) return "transparent";
  if (OPAQUE_WRAPPERS.has(name)) return "opaque";
  if (interpreterFlags(name) !== undefined || name in CODE_RUNNERS) return "interpreter";
  if (SHELL_STATE_CHANGERS.has(name)) return "state";
  if (DECLARATIONS.has(name)) return "declaration";
  return "plain";
}

function interpreterFlags(name: string): string[] | undefined {
  if (/^python[0-9.]*$/.test(name) || /^pypy[0-9.]*$/.test(name)) return INTERPRETERS["python"];
  if (/^(perl|ruby|php|lua)[0-9.]*$/.test(name)) return INTERPRETERS[name.replace(/[0-9.]+$/, "")];
  return INTERPRETERS[name];
}

/** The base name of a command word: `/usr/bin/rm` and `./rm` run rm. */
export function programName(word: string): string {
  const base = word.replace(/\/+$/, "").split("/").pop();
  return base === undefined || base === "" ? word : base;
}

/** The `-c` script of a shell invocation, or undefined when the shell reads a file or stdin. */
export function shellScriptArgument(words: ShellWord[]): string | undefined {
  let wantsScript = false;
  for (let index = 1; index < words.length; index++) {
    const text = (words[index] as ShellWord).text;
    if (text === "--" || text === "-") return wantsScript ? words[index + 1]?.text : undefined;
    if (/^[-+]o$|^-O$|^\+O$/.test(text)) {
      index++;
      continue;
    }
    if (/^[-+][A-Za-z]+$/.test(text)) {
      if (text.startsWith("-") && text.includes("c")) wantsScript = true;
      continue;
    }
    if (text.startsWith("--")) continue;
    return wantsScript ? text : undefined;
  }
  return undefined;
}

/**
 * The command a transparent wrapper runs (`env X=1 git log` → `git log`), or undefined when it runs
 * none or its options cannot be read with confidence (`env -S`).
 */
export function wrappedCommand(words: ShellWord[]): ShellWord[] | undefined {
  const program = programName((words[0] as ShellWord).text).toLowerCase();
  const specification = TRANSPARENT_WRAPPERS[program];
  if (!specification) return undefined;
  let index = 1;
  while (index < words.length) {
    const word = words[index] as ShellWord;
    if (word.text === "--") {
      index++;
      break;
    }
    if (program === "env" && /^(-S|--split-string)/.test(word.text)) return undefined;
    if (word.text.startsWith("-") && word.text.length > 1) {
      index += specification.valueOptions.includes(word.text) ? 2 : 1;
      continue;
    }
    if (program === "env" && word.assignment !== undefined) {
      index++;
      continue;
    }
    break;
  }
  index += specification.positionals;
  return index < words.length ? words.slice(index) : undefined;
}

/** Whether an interpreter is given code the check cannot read: inline code, or a program on stdin. */
export function runsUnreadableCode(words: ShellWord[]): boolean {
  const name = programName((words[0] as ShellWord).text).toLowerCase();
  const runner = CODE_RUNNERS[name];
  if (runner) return words.slice(1).some((word) => runner.test(word.text));
  const flags = interpreterFlags(name) ?? [];
  const rest = words.slice(1).map((word) => word.text.toLowerCase());
  if (rest.length === 0 || rest.includes("-")) return true;
  return rest.some((text) =>
    flags.some((flag) => text === flag || (flag.length === 2 && text.startsWith(flag))),
  );
}

/** Whether a declaration builtin sets a sensitive variable (`export PATH=…`) or touches functions. */
export function declaresSomethingRisky(words: ShellWord[]): boolean {
  return words.slice(1).some((word) => {
    if (/^[-+][A-Za-z]*[fF]/.test(word.text)) return true;
    const name = /^([A-Za-z_][A-Za-z0-9_]*)/.exec(word.text)?.[1];
    return name !== undefined && SENSITIVE_VARIABLES.has(name);
  });
}

/** The first sensitive variable a wrapper sets for its command (`env BASH_ENV=./x bash -c …`). */
export function setsSensitiveVariable(words: ShellWord[]): string | undefined {
  return words
    .slice(1)
    .map((word) => word.assignment)
    .find((name) => name !== undefined && SENSITIVE_VARIABLES.has(name));
}

/**
 * Whether a shell starts interactive or as a login shell (`-i`, `-l`, `--login`, `--rcfile`): it
 * then runs startup files such as ~/.bashrc or ~/.profile, which the command may have just written.
 */
export function readsStartupFiles(words: ShellWord[]): boolean {
  for (let index = 1; index < words.length; index++) {
    const text = (words[index] as ShellWord).text;
    if (/^--(login|rcfile|init-file|interactive)/.test(text)) return true;
    if (/^[-+][oO]$/.test(text)) {
      index++;
      continue;
    }
    if (/^-[A-Za-z]+$/.test(text)) {
      if (/[il]/.test(text)) return true;
      if (text.includes("c")) return false;
      continue;
    }
    if (!/^[-+]/.test(text) || text === "-" || text === "--") return false;
  }
  return false;
}
