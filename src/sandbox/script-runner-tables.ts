/**
 * How programs that run a script or another command read their options: which take a value (so
 * the word after them is not the script), which name a file they run or read code from, which
 * give code inline. An option a table does not list is a doubt: the caller then takes every later
 * word as a possible script.
 */
export interface RunnerOptions {
  /** Options followed by a value that is neither the script nor run (`-X dev`, `-o posix`). */
  values: readonly string[];
  /** Options that take no value. */
  flags: readonly string[];
  /** Options whose value is a file that runs, or decides what runs (`-r ./a.js`, `--rcfile`). */
  files: readonly string[];
  /** Options that make the next word a shell command line (`sh -c '…'`, `flock -c '…'`). */
  commands: readonly string[];
  /** Options that give code inline: what it imports is not read (`python3 -c`, `node -e`). */
  code: readonly string[];
  /** Options naming a module run as the script (`python3 -m package.tool`). */
  modules?: readonly string[];
  /** Unlisted long options take no value (bash's, python's), so they are no doubt. */
  longFlagsOnly?: boolean;
  /** Unlisted single-letter options take no value. */
  shortFlagsOnly?: boolean;
}

const NONE: readonly string[] = [];

const SHELL: RunnerOptions = {
  values: ["-o", "+o", "-O", "+O"],
  flags: NONE,
  files: ["--rcfile", "--init-file"],
  commands: ["-c"],
  code: NONE,
  longFlagsOnly: true,
  shortFlagsOnly: true,
};

const NODE: RunnerOptions = {
  values: ["--input-type", "--title", "--conditions", "-C", "--stack-size", "--inspect-port", "--watch-path"],
  flags: ["--no-warnings", "--enable-source-maps", "--trace-warnings", "--watch", "--test", "--inspect"],
  files: [
    "-r",
    "--require",
    "--import",
    "--loader",
    "--experimental-loader",
    "--env-file",
    "--openssl-config",
  ],
  commands: NONE,
  code: ["-e", "--eval", "-p", "--print"],
};

const PYTHON: RunnerOptions = {
  values: ["-X", "-W", "-Q", "--check-hash-based-pycs"],
  flags: NONE,
  files: NONE,
  commands: NONE,
  code: ["-c"],
  modules: ["-m"],
  longFlagsOnly: true,
  shortFlagsOnly: true,
};

/**
 * Programs that find their script, and the files their options load, Node's way: a missing
 * `server` runs `server.js` (or another of these extensions), a folder runs its `index.js` or its
 * `package.json`'s main, and a bare `-r setup` is looked for in each `node_modules` above.
 */
export const NODE_RESOLVERS: ReadonlySet<string> = new Set(["node", "nodejs", "bun", "tsx", "ts-node"]);

/** What Node (or a TypeScript runner) adds to a script's name before it looks for a folder. */
export const NODE_EXTENSIONS: readonly string[] = [
  ".js",
  ".mjs",
  ".cjs",
  ".json",
  ".node",
  ".ts",
  ".mts",
  ".cts",
  ".tsx",
  ".jsx",
];

/** Programs that run the file named by their first word that is not an option. */
export const INTERPRETERS: Readonly<Record<string, RunnerOptions>> = {
  sh: SHELL,
  bash: SHELL,
  dash: SHELL,
  zsh: SHELL,
  ksh: SHELL,
  node: NODE,
  nodejs: NODE,
  deno: { ...NODE, values: [...NODE.values, "--config", "-c", "--import-map", "--allow-read"] },
  bun: NODE,
  tsx: NODE,
  "ts-node": NODE,
  python: PYTHON,
  python3: PYTHON,
  perl: {
    values: ["-I", "-M", "-m", "-l", "-0"],
    flags: NONE,
    files: NONE,
    commands: NONE,
    code: ["-e", "-E"],
  },
  ruby: { values: ["-I", "-C", "-E", "-F"], flags: NONE, files: ["-r"], commands: NONE, code: ["-e"] },
  php: {
    values: ["-c", "-d", "-z"],
    flags: NONE,
    files: ["-f"],
    commands: NONE,
    code: ["-r", "-B", "-R", "-E"],
  },
  source: { values: NONE, flags: NONE, files: NONE, commands: NONE, code: NONE },
  ".": { values: NONE, flags: NONE, files: NONE, commands: NONE, code: NONE },
};

/** A program that runs the command line following its options (and `positionals` words). */
export interface WrapperOptions extends RunnerOptions {
  /** Words before the command that are not options: `timeout 30`, `flock /tmp/lock`. */
  positionals: number;
  /** `env NAME=value …`: assignments come before the command. */
  assignments?: boolean;
}

function wrapper(options: Partial<WrapperOptions>): WrapperOptions {
  return { values: NONE, flags: NONE, files: NONE, commands: NONE, code: NONE, positionals: 0, ...options };
}

/**
 * `env NAME=value ./gate.sh`, `exec ./gate.sh`, `timeout -s KILL 30 ./gate.sh`, `nice -n 5 …`,
 * `stdbuf -oL …`, `ionice -c 3 …`, `setsid -w …`, `flock lock -c '…'`, `sudo -u me …`.
 */
export const WRAPPERS: Readonly<Record<string, WrapperOptions>> = {
  env: wrapper({
    values: ["-u", "--unset", "-C", "--chdir"],
    flags: ["-i", "--ignore-environment", "-0", "--null", "-v", "--debug"],
    commands: ["-S", "--split-string"],
    assignments: true,
  }),
  exec: wrapper({ values: ["-a"], flags: ["-c", "-l"] }),
  command: wrapper({ flags: ["-p", "-v", "-V"] }),
  builtin: wrapper({}),
  nohup: wrapper({}),
  time: wrapper({ values: ["-f", "--format", "-o", "--output"], flags: ["-p", "-v", "-a", "-q"] }),
  nice: wrapper({ values: ["-n", "--adjustment"] }),
  setsid: wrapper({ flags: ["-c", "--ctty", "-f", "--fork", "-w", "--wait"] }),
  stdbuf: wrapper({ values: ["-i", "-o", "-e", "--input", "--output", "--error"] }),
  timeout: wrapper({
    values: ["-s", "--signal", "-k", "--kill-after"],
    flags: ["--preserve-status", "--foreground", "-v", "--verbose"],
    positionals: 1,
  }),
  ionice: wrapper({
    values: ["-c", "--class", "-n", "--classdata", "-p", "--pid", "-P", "--pgid", "-u", "--uid"],
    flags: ["-t", "--ignore"],
  }),
  chrt: wrapper({ flags: ["-b", "-d", "-f", "-i", "-o", "-r", "-R", "-a", "-v"], positionals: 1 }),
  taskset: wrapper({ flags: ["-a", "-c", "--cpu-list"], positionals: 1 }),
  flock: wrapper({
    values: ["-w", "--timeout", "-E", "--conflict-exit-code"],
    flags: ["-s", "-x", "-n", "-o", "-u", "--shared", "--exclusive", "--nonblock", "--close"],
    commands: ["-c", "--command"],
    positionals: 1,
  }),
  sudo: wrapper({
    values: ["-u", "--user", "-g", "--group", "-C", "-D", "--chdir", "-h", "--host", "-p", "--prompt"],
    flags: ["-E", "-H", "-n", "-S", "-b", "-k", "-P"],
  }),
  doas: wrapper({ values: ["-u", "-C"], flags: ["-n", "-s"] }),
  unbuffer: wrapper({}),
  watch: wrapper({
    values: ["-n", "--interval", "-d"],
    flags: ["-t", "-b", "-e", "-g", "-c", "-x", "--exec", "-p", "--precise"],
  }),
};

/** Variables naming a file a shell started with them runs first (`BASH_ENV=./rc bash -c …`). */
export const STARTUP_FILE_VARIABLES: ReadonlySet<string> = new Set(["BASH_ENV", "ENV"]);

/** A program that runs the commands of a file an option names, or of one it finds in its folder. */
export interface CommandFileOptions {
  /** Options whose value is that file (`make -f hooks/Makefile`, `awk -f check.awk`). */
  options: readonly string[];
  /** Read from the folder when no option names one (`make check` runs `./Makefile`). */
  implicit: readonly string[];
  /** Options whose value is the folder it reads from (`make -C tools`). */
  folders: readonly string[];
}

const MAKE: CommandFileOptions = {
  options: ["-f", "--file", "--makefile"],
  implicit: ["GNUmakefile", "makefile", "Makefile"],
  folders: ["-C", "--directory"],
};
const AWK: CommandFileOptions = { options: ["-f", "--file"], implicit: NONE, folders: NONE };

/**
 * Programs whose commands come from a file rather than their words: make's recipes, an awk
 * program's `system()`, a sed script's `e` (GNU sed runs it in a shell).
 */
export const COMMAND_FILE_PROGRAMS: Readonly<Record<string, CommandFileOptions>> = {
  make: MAKE,
  gmake: MAKE,
  awk: AWK,
  gawk: AWK,
  mawk: AWK,
  nawk: AWK,
  sed: { options: ["-f", "--file"], implicit: NONE, folders: NONE },
};

/**
 * Programs that build what they run when they run (from their input: `ls | xargs sh`, `parallel`,
 * `find -exec`): no word of their command line can be ruled out.
 */
export const BUILT_AT_RUN_TIME = new Set(["xargs", "parallel"]);

/** `find`'s actions that run a command on what it found. */
export const FIND_ACTIONS = new Set(["-exec", "-execdir", "-ok", "-okdir"]);

/** Words that look like a script whatever runs them (`my-runner gate.sh`). */
export const SCRIPT_FILE_NAME = /\.(?:sh|bash|zsh|ksh|py|pyw|[cm]?js|[cm]?ts|jsx|tsx|rb|pl|pm|php|lua|tcl)$/;
