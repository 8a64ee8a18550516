import path from "node:path";
import {
  BUILT_AT_RUN_TIME,
  COMMAND_FILE_PROGRAMS,
  type CommandFileOptions,
  FIND_ACTIONS,
  INTERPRETERS,
  NODE_EXTENSIONS,
  NODE_RESOLVERS,
  type RunnerOptions,
  SCRIPT_FILE_NAME,
  STARTUP_FILE_VARIABLES,
  WRAPPERS,
} from "./script-runner-tables.js";
import { UNKNOWN } from "./built-word.js";
import { readCommandLine } from "./command-line-words.js";

/** What a command line may run that an agent could make before it runs. */
export interface ScriptCandidates {
  /** Scripts named by a path known now: `./audit.sh`, `sh gates/check.sh`, `~/hooks/gate.sh`. */
  paths: string[];
  /**
   * File names (`*` for a part known only when the command runs) of scripts whose folder is not
   * known before the command runs (`"$PROJECT"/hooks/gate.sh`, `cd "$X" && sh gate.sh`), and every
   * word of a command that builds what it runs when it runs (`… | xargs sh`, `sh -c "$X"`).
   */
  names: string[];
  /**
   * Where a program named without a `/` (`gate`, `python3`) would be found: the same name in each
   * folder of `PATH` (a relative one read from where the command runs). Most lie where no agent
   * writes; the caller keeps those inside a writable folder.
   */
  onPath: string[];
  /**
   * What a Node-like program runs in place of a script named in `paths` that is missing: the name
   * with an extension Node adds (`node gates/server` runs `gates/server.js`), and for a bare
   * module an option loads (`node -r setup`) the same in each `node_modules` above the folder.
   */
  resolved: string[];
}

/** Words the shell runs itself, never looked up on PATH. */
const SHELL_BUILTINS = new Set(
  "if then else elif fi for while until do done case esac in function select time [ [[ ] ]] ! { } : true false echo printf test read exit return set unset export shift trap wait break continue local declare typeset readonly alias unalias type hash ulimit umask cd pushd popd exec eval source . command builtin let".split(
    " ",
  ),
);

const ASSIGNMENT = /^[A-Za-z_][A-Za-z0-9_]*=/;

/**
 * The scripts a command line runs: a program named with a path (`./audit.sh`), the file an
 * interpreter is given past its options (`python3 -X dev gate.py`, `bash -o posix gate.sh`), the
 * files its options load (`node -r ./setup.js server.js`), the command of a wrapper (`nohup`,
 * `stdbuf -oL`, `ionice -c 3`, `timeout -s KILL 30`, `env -u X`), of `sh -c '…'` and `eval`, and
 * any word that looks like a script (`runner gate.sh`). `~` and the variables `known` holds are
 * expanded. Where the shell decides only when it runs (another variable, `$(…)`, an option this
 * reading does not know, `xargs`), the safe side: more words count, or their file names do.
 * Narrower than `commandCandidates`: not the files a command only reads or writes
 * (`cat > last-run.json`), which an agent may well make itself.
 */
export function scriptCandidates(
  commandLine: readonly string[] | string,
  baseDirectory: string,
  known: Readonly<Record<string, string>> = {},
): ScriptCandidates {
  const reading = new CommandReading(baseDirectory, { PWD: baseDirectory, ...known });
  if (typeof commandLine === "string") reading.line(commandLine);
  else reading.command([...commandLine], []);
  return reading.result();
}

/** Whether `fileName` is one of `names` (patterns whose `*` stands for any text). */
export function matchesUnmadeName(names: readonly string[], fileName: string): boolean {
  return names.some((name) =>
    name.includes("*")
      ? new RegExp(`^${name.split("*").map(escapeForRegExp).join(".*")}$`, "s").test(fileName)
      : name === fileName,
  );
}

function escapeForRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}

/** Nesting of `sh -c '…'`, `eval …` read before giving up (then every word counts by name). */
const MAX_DEPTH = 8;

class CommandReading {
  readonly #paths = new Set<string>();
  readonly #names = new Set<string>();
  readonly #onPath = new Set<string>();
  readonly #resolved = new Set<string>();
  /** Undefined once a `cd` went somewhere unknown: relative scripts then count by name. */
  #folder: string | undefined;
  #depth = 0;
  /** Set while a Node-like program's words are read: each script also counts with Node's extensions. */
  #nodeResolved = false;
  /** Set when nothing of the line can be ruled out: every word's file name counts. */
  #everyWord = false;
  readonly #words: string[] = [];

  constructor(
    baseDirectory: string,
    readonly known: Readonly<Record<string, string>>,
  ) {
    this.#folder = baseDirectory;
  }

  line(text: string): void {
    if (++this.#depth > MAX_DEPTH) {
      this.#undecidable(text);
      return;
    }
    let read: boolean;
    try {
      read = readCommandLine(text, this.known, {
        command: ({ words, inputs, inputText }) => this.command(words, inputs, inputText),
        word: (word) => this.#words.push(word),
        subshell: (readInside) => {
          const folder = this.#folder;
          readInside();
          this.#folder = folder;
        },
      });
    } catch {
      read = false; // The grammar is not loaded (loadBashParser): nothing here can be ruled out.
    }
    // Not read whole: every word counts by name.
    if (!read) this.#undecidable(text);
    this.#depth -= 1;
  }

  /**
   * A command line this reading cannot decide: every piece of it between blanks, quotes and
   * operators counts by its file name, `$…` and globs as any text.
   */
  #undecidable(text: string): void {
    this.#everyWord = true;
    for (const piece of text.split(/[\s;&|()<>'"`]+/)) {
      this.#words.push(piece.replace(/\$\{?[A-Za-z0-9_@*#?$!-]*\}?|[*?]/g, UNKNOWN));
    }
  }

  /** One simple command: its words (assignments first) and the files its stdin reads. */
  command(words: string[], inputs: string[], inputText?: string): void {
    this.#words.push(...words);
    // `BASH_ENV=./rc bash -c …`, `env ENV=… sh`, `export BASH_ENV=…`: a shell started with it runs the file.
    for (const word of words) {
      const equals = word.indexOf("=");
      if (equals > 0 && STARTUP_FILE_VARIABLES.has(word.slice(0, equals)))
        this.#script(word.slice(equals + 1));
    }
    let index = 0;
    while (index < words.length && ASSIGNMENT.test(words[index] as string)) index += 1;
    for (;;) {
      const word = words[index];
      if (word === undefined) return;
      const table = Object.hasOwn(WRAPPERS, path.basename(word)) ? WRAPPERS[path.basename(word)] : undefined;
      if (table === undefined || word.includes(UNKNOWN)) break;
      let options = this.#options(words, index + 1, table);
      if (options.doubt) return this.#everyLaterWord(words, index + 1);
      if (options.command !== undefined) return this.line(options.command);
      let next = options.index;
      for (let left = table.positionals; left > 0 && next < words.length; left--) next += 1;
      if (table.positionals > 0) {
        // `flock lock -c '…'`: options may follow the positional words.
        options = this.#options(words, next, table);
        if (options.doubt) return this.#everyLaterWord(words, next);
        if (options.command !== undefined) return this.line(options.command);
        next = options.index;
      }
      index = next;
    }
    this.#program(words, index, inputs, inputText);
    // `runner gate.sh`: a program this reading does not know may run any word that looks like a
    // script (not a command line given whole, `sh -c 'sh y.sh'`, read above).
    for (const later of words.slice(index + 1)) {
      if (!later.startsWith("-") && !/\s/.test(later) && SCRIPT_FILE_NAME.test(later)) this.#script(later);
    }
  }

  /** The program of a simple command at `index`, past its assignments and wrappers. */
  #program(words: string[], index: number, inputs: string[], inputText: string | undefined): void {
    const word = words[index] as string;
    const program = path.basename(word);
    if (word.includes(UNKNOWN)) {
      // `$RUNNER gate.sh`, `"$PROJECT/gate.sh"`: the program, or any of its words, may be the script.
      this.#script(word);
      return this.#everyLaterWord(words, index + 1);
    }
    if (word === "cd" || word === "pushd") return this.#changeFolder(words[index + 1]);
    if (word === "eval") return this.line(words.slice(index + 1).join(" "));
    if (word === "trap") {
      // `trap 'sh cleanup.sh' EXIT`: the shell runs the action's command line when the signal comes.
      const action = words[index + 1] === "--" ? words[index + 2] : words[index + 1];
      if (action !== undefined && !action.startsWith("-")) this.line(action);
      return;
    }
    if (
      BUILT_AT_RUN_TIME.has(program) ||
      (program === "find" && words.some((each) => FIND_ACTIONS.has(each)))
    ) {
      this.#everyWord = true;
      return;
    }
    if (!word.includes("/")) this.#lookedUp(word);
    const interpreter = Object.hasOwn(INTERPRETERS, program) ? INTERPRETERS[program] : undefined;
    if (interpreter !== undefined)
      return this.#interpreted(program, interpreter, words, index + 1, { files: inputs, text: inputText });
    const commandFile = Object.hasOwn(COMMAND_FILE_PROGRAMS, program)
      ? COMMAND_FILE_PROGRAMS[program]
      : undefined;
    if (commandFile !== undefined) this.#commandFiles(commandFile, words.slice(index + 1));
    if (word.includes("/")) this.#script(word);
  }

  /**
   * The files of commands a program like make or awk runs: those its options name, else those it
   * finds in its folder (`make -C tools check` runs `tools/Makefile`).
   */
  #commandFiles(table: CommandFileOptions, words: readonly string[]): void {
    let named = false;
    let folder: string | undefined = ".";
    for (let index = 0; index < words.length; index++) {
      const word = words[index] as string;
      const option = [...table.options, ...table.folders].find(
        (each) => word === each || word.startsWith(each.startsWith("--") ? `${each}=` : each),
      );
      if (option === undefined) continue;
      const value = word === option ? words[index + 1] : word.slice(option.length).replace(/^=/, "");
      if (word === option) index += 1;
      if (value === undefined) continue;
      if (table.folders.includes(option)) folder = value.includes(UNKNOWN) ? undefined : value;
      else {
        named = true;
        this.#script(value);
      }
    }
    if (named) return;
    for (const file of table.implicit) {
      if (folder === undefined) this.#names.add(file);
      else this.#script(path.join(folder, file));
    }
  }

  /** A program named without a `/`: where PATH would find it (`.` and empty entries: the folder now). */
  #lookedUp(program: string): void {
    const searchPath = this.known["PATH"];
    if (searchPath === undefined || program === "" || SHELL_BUILTINS.has(program)) return;
    for (const entry of searchPath.split(":")) {
      if (path.isAbsolute(entry)) this.#onPath.add(path.join(entry, program));
      else if (this.#folder !== undefined) this.#onPath.add(path.resolve(this.#folder, entry, program));
    }
  }

  result(): ScriptCandidates {
    if (this.#everyWord) {
      for (const word of this.#words) {
        const name = word.slice(word.lastIndexOf("/") + 1);
        if (name.startsWith("-") || name === "." || name === ".." || !/[^\0]/.test(name)) continue;
        this.#names.add(name.replaceAll(UNKNOWN, "*"));
      }
    }
    return {
      paths: [...this.#paths],
      names: [...this.#names],
      onPath: [...this.#onPath],
      resolved: [...this.#resolved],
    };
  }

  #interpreted(
    program: string,
    table: RunnerOptions,
    words: string[],
    start: number,
    input: CommandInput,
  ): void {
    const outer = this.#nodeResolved;
    this.#nodeResolved = NODE_RESOLVERS.has(program);
    try {
      this.#interpretedWords(program, table, words, start, input);
    } finally {
      this.#nodeResolved = outer;
    }
  }

  #interpretedWords(
    program: string,
    table: RunnerOptions,
    words: string[],
    start: number,
    input: CommandInput,
  ): void {
    const options = this.#options(words, start, table);
    if (options.doubt) return this.#everyLaterWord(words, start);
    if (options.command !== undefined) return this.line(options.command);
    if (options.code) return;
    const script = words[options.index];
    // `deno run gate.ts`, `bun run gate.ts`.
    if ((program === "deno" || program === "bun") && script === "run") {
      return this.#interpreted(program, table, words, options.index + 1, input);
    }
    if (options.commandNext) {
      if (script !== undefined) this.line(script);
      return;
    }
    if (options.module !== undefined) {
      const module = options.module.replaceAll(".", "/");
      for (const file of [`${module}.py`, `${module}/__main__.py`, `${module}/__init__.py`])
        this.#script(file);
      return;
    }
    if (script !== undefined && script !== "-") {
      // bash runs a script it does not find in the folder from PATH (`bash gate.sh`).
      if (program === "bash" && !script.includes("/") && !script.includes(UNKNOWN)) this.#lookedUp(script);
      return this.#script(script);
    }
    for (const file of input.files) this.#script(file);
    // `bash <<EOF … EOF`: a shell runs the command lines its input gives.
    if (input.text !== undefined && table.commands.length > 0) this.line(input.text);
    // `cat gate | bash`: it runs what its input brings, from a pipe this reading does not follow.
    if (input.files.length === 0 && input.text === undefined && program !== "source" && program !== ".")
      this.#everyWord = true;
  }

  /**
   * Reads the options from `start`: where the first word past them is, whether one was not known
   * (then any later word may be the script), and what the options themselves run.
   */
  #options(words: string[], start: number, table: RunnerOptions & { assignments?: boolean }): OptionsRead {
    const read: OptionsRead = { index: start, doubt: false, code: false, commandNext: false };
    const take = (option: string, value: string | undefined): boolean => {
      if (table.values.includes(option)) return true;
      if (table.files.includes(option)) {
        if (value !== undefined) this.#script(value, true);
        return true;
      }
      if (table.commands.includes(option)) {
        if (value === undefined) read.commandNext = true;
        else read.command = value;
        return true;
      }
      if (table.code.includes(option)) {
        read.code = true;
        return true;
      }
      if (table.modules?.includes(option) === true) {
        if (value !== undefined) read.module = value;
        return true;
      }
      return false;
    };
    let index = start;
    while (index < words.length) {
      const word = words[index] as string;
      if (word === "--") {
        index += 1;
        break;
      }
      if (table.assignments === true && ASSIGNMENT.test(word)) {
        index += 1;
        continue;
      }
      const plus = table.values.includes("+o") && /^\+[A-Za-z]/.test(word);
      if (!(word.startsWith("-") && word.length > 1) && !plus) break;
      if (read.module !== undefined || read.code) break;
      const equals = word.indexOf("=");
      if (word.startsWith("--") && equals !== -1) {
        take(word.slice(0, equals), word.slice(equals + 1));
        index += 1;
        continue;
      }
      if (table.flags.includes(word)) {
        index += 1;
        continue;
      }
      const lists = [table.values, table.files, table.commands, table.code, table.modules ?? []];
      if (lists.some((list) => list.includes(word))) {
        const value = words[index + 1];
        // `-c` of a shell is a flag: its command line is the first word past the options.
        if (table.commands.includes(word) && table.shortFlagsOnly === true) read.commandNext = true;
        else take(word, value);
        index += table.commands.includes(word) && table.shortFlagsOnly === true ? 1 : 2;
        continue;
      }
      if (!word.startsWith("--")) {
        // `-r./setup.js`: a value written onto its option.
        if (table.shortFlagsOnly !== true && word.length > 2 && take(word.slice(0, 2), word.slice(2))) {
          index += 1;
          continue;
        }
        if (table.shortFlagsOnly === true) {
          // `bash -ec '…'`, `sh -xo posix gate.sh`: a cluster of single-letter options.
          const letters = [...word.slice(1)];
          if (letters.some((letter) => table.commands.includes(`-${letter}`))) read.commandNext = true;
          if (letters.some((letter) => table.code.includes(`-${letter}`))) read.code = true;
          const last = `${word[0]}${letters.at(-1) ?? ""}`;
          index += table.values.includes(last) ? 2 : 1;
          continue;
        }
      } else if (table.longFlagsOnly === true) {
        index += 1;
        continue;
      }
      read.doubt = true;
      index += 1;
    }
    read.index = index;
    return read;
  }

  /** Every word from `start` that is not an option may be the script (an option not known came first). */
  #everyLaterWord(words: string[], start: number): void {
    for (const word of words.slice(start)) {
      if (!word.startsWith("-") && !ASSIGNMENT.test(word)) this.#script(word);
    }
  }

  #changeFolder(target: string | undefined): void {
    if (target === undefined) {
      this.#folder = this.known["HOME"];
      return;
    }
    if (target.includes(UNKNOWN) || target === "-") this.#folder = undefined;
    else if (path.isAbsolute(target)) this.#folder = path.resolve(target);
    else if (this.#folder !== undefined) this.#folder = path.resolve(this.#folder, target);
  }

  /**
   * A word that names a script: its path when known now, else its file name as a pattern. Read for
   * a Node-like program, also what Node runs when it is missing (`server` → `server.js`) and, for a
   * bare module name an option `loads` (`-r setup`), the same in each `node_modules` above the folder.
   */
  #script(word: string, loads = false): void {
    if (word === "" || word === "-") return;
    this.#scriptAsNamed(word);
    if (!this.#nodeResolved) return;
    if (word.includes(UNKNOWN) || this.#folder === undefined) {
      for (const extension of NODE_EXTENSIONS) this.#scriptAsNamed(`${word}${extension}`);
      return;
    }
    const named = path.resolve(this.#folder, word);
    for (const extension of NODE_EXTENSIONS) this.#resolved.add(`${named}${extension}`);
    if (!loads || word.startsWith(".") || path.isAbsolute(word)) return;
    for (let folder = this.#folder; ; folder = path.dirname(folder)) {
      const module = path.join(folder, "node_modules", word);
      this.#resolved.add(module);
      for (const extension of NODE_EXTENSIONS) this.#resolved.add(`${module}${extension}`);
      if (folder === path.dirname(folder)) return;
    }
  }

  #scriptAsNamed(word: string): void {
    if (!word.includes(UNKNOWN)) {
      if (path.isAbsolute(word)) this.#paths.add(path.resolve(word));
      else if (this.#folder !== undefined) this.#paths.add(path.resolve(this.#folder, word));
      else this.#names.add(path.basename(word));
      return;
    }
    const name = word.slice(word.lastIndexOf("/") + 1);
    // `$SCRIPT`: nothing of its name is known; every word of the line counts instead.
    if (!/[^\0]/.test(name)) this.#everyWord = true;
    else this.#names.add(name.replaceAll(UNKNOWN, "*"));
  }
}

/** What a command's stdin reads: files (`< gate.sh`), or text (`<<EOF`, `<<<`). */
interface CommandInput {
  files: readonly string[];
  text: string | undefined;
}

interface OptionsRead {
  index: number;
  doubt: boolean;
  /** Inline code (`python3 -c`, `node -e`): no script file. */
  code: boolean;
  /** A shell's `-c`: the first word past the options is a command line. */
  commandNext: boolean;
  /** A command line given as an option's value (`flock lock -c '…'`, `env -S '…'`). */
  command?: string;
  /** `python3 -m package.module`. */
  module?: string;
}
