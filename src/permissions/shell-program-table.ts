/**
 * What the shell permission check knows about programs: the ones that run commands or code given
 * to them some other way than as their first word. Kept as data: a program missing here is judged
 * as a plain program, so every entry closes a way around the rules. Names are matched on the base
 * name, lowercased, with a version suffix dropped (`python3.12` → `python`).
 */

/** Shells: `-c SCRIPT` is parsed and checked too; any other use reads commands from a file or stdin. */
export const SHELLS: ReadonlySet<string> = new Set([
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
  "busybox",
  "toybox",
  "elvish",
  "nu",
  "xonsh",
  "osh",
  "ysh",
  "capsh",
]);

/** How to read past a wrapper's own options to the command it runs. */
export interface WrapperGrammar {
  /** Options that take the next word as their value (`-n 5`); `--name=value` is read as one word. */
  valueOptions: readonly string[];
  /** Options known to change nothing a rule cares about; any other option makes it a runner. */
  flagOptions: readonly string[];
  /** Positional words before the command (the duration of `timeout`). */
  positionals: number;
  /** `env`: leading `NAME=value` words are assignments, not the command. */
  assignments?: boolean;
}

/**
 * Wrappers that run the rest of their words as a command and change nothing a rule cares about:
 * the command they run is checked as if written alone. An option not listed here (`env -S`,
 * `command -v` aside) makes the check treat the wrapper as a runner it cannot read.
 */
export const WRAPPERS: Readonly<Record<string, WrapperGrammar>> = {
  env: {
    valueOptions: ["-u", "--unset", "-C", "--chdir"],
    flagOptions: ["-i", "--ignore-environment", "-0", "--null", "-"],
    positionals: 0,
    assignments: true,
  },
  command: { valueOptions: [], flagOptions: ["-p", "-v", "-V"], positionals: 0 },
  builtin: { valueOptions: [], flagOptions: [], positionals: 0 },
  exec: { valueOptions: ["-a"], flagOptions: ["-c"], positionals: 0 },
  nice: { valueOptions: ["-n", "--adjustment"], flagOptions: [], positionals: 0 },
  nohup: { valueOptions: [], flagOptions: [], positionals: 0 },
  time: {
    valueOptions: ["-f", "--format", "-o", "--output"],
    flagOptions: ["-p", "-v", "-a"],
    positionals: 0,
  },
  timeout: {
    valueOptions: ["-s", "--signal", "-k", "--kill-after"],
    flagOptions: ["--preserve-status", "--foreground", "-v", "--verbose"],
    positionals: 1,
  },
  stdbuf: {
    valueOptions: ["-i", "-o", "-e", "--input", "--output", "--error"],
    flagOptions: [],
    positionals: 0,
  },
  setsid: { valueOptions: [], flagOptions: ["-f", "--fork", "-w", "--wait"], positionals: 0 },
  ionice: { valueOptions: ["-c", "--class", "-n", "--classdata"], flagOptions: ["-t"], positionals: 0 },
};

/**
 * Programs that run commands the check cannot read in full: from stdin, from a file (a Makefile, a
 * directory of scripts), from options, on another host, with other privileges or in another
 * namespace. Always `ask` at best (unless an allow rule names the program); every later word is
 * still checked as the start of a command and as a script, so a deny rule still denies.
 */
export const RUNNERS: ReadonlySet<string> = new Set([
  "xargs",
  "parallel",
  "sudo",
  "doas",
  "su",
  "runuser",
  "pkexec",
  "sg",
  "newgrp",
  "setpriv",
  "setarch",
  "linux32",
  "linux64",
  "prlimit",
  "logsave",
  "run-parts",
  "chrt",
  "taskset",
  "numactl",
  "flock",
  "chroot",
  "unshare",
  "nsenter",
  "script",
  "watch",
  "strace",
  "ltrace",
  "gdb",
  "lldb",
  "valgrind",
  "perf",
  "catchsegv",
  "ssh",
  "mosh",
  "docker",
  "podman",
  "kubectl",
  "systemd-run",
  "fakeroot",
  "firejail",
  "bwrap",
  "proxychains",
  "proxychains4",
  "torsocks",
  "caffeinate",
  "unbuffer",
  "expect",
  "make",
  "gmake",
  "bmake",
  "cmake",
  "ninja",
  "npx",
  "npm",
  "pnpm",
  "yarn",
  "bunx",
  "uvx",
  "uv",
  "poetry",
  "pipx",
  "bundle",
  "rake",
  "vim",
  "vi",
  "nvim",
  "ex",
  "view",
  "vimdiff",
  "rvim",
  "emacs",
  "ed",
  "red",
  "sqlite3",
  "psql",
  "mysql",
  "crontab",
  "at",
  "batch",
  "nc",
  "ncat",
  "socat",
  "tmux",
  "screen",
  "dtach",
  "rview",
  "vim.basic",
  "vim.tiny",
  "gdbtui",
  "vgdb",
  "ssh-argv0",
  "ld.so",
  "ld-linux.so.2",
  "ld-linux-x86-64.so.2",
  "ldd",
  "pg_virtualenv",
  "make-first-existing-target",
  "runcon",
  "cgexec",
  "chpst",
  "daemonize",
  "start-stop-daemon",
  "xvfb-run",
  "dbus-run-session",
  "sshpass",
  "faketime",
  "eatmydata",
  "rlwrap",
  "entr",
  "chronic",
  "ifne",
  "pip",
  "pip3",
  "gem",
  "composer",
  "mvn",
  "gradle",
  "ant",
  "bazel",
  "meson",
  "scons",
  "just",
  "tox",
  "nox",
  "pytest",
  "jest",
  "mocha",
  "vitest",
  "tsx",
  "ts-node",
  "swift",
  "pdb",
  "pydoc",
]);

/** Interpreters: whatever they run (inline code, a script file, stdin) is code the check cannot read. */
export const INTERPRETERS: ReadonlySet<string> = new Set([
  "python",
  "pypy",
  "perl",
  "ruby",
  "irb",
  "node",
  "nodejs",
  "deno",
  "bun",
  "php",
  "lua",
  "luajit",
  "rscript",
  "r",
  "osascript",
  "pwsh",
  "powershell",
  "tclsh",
  "wish",
  "julia",
  "guile",
  "racket",
  "sbcl",
  "clisp",
  "ocaml",
  "ghci",
  "runghc",
  "scala",
  "groovy",
  "jshell",
  "java",
  "dotnet",
  "go",
  "cargo",
  "rustc",
  "gcc",
  "cc",
  "clang",
  "tcc",
  "bc",
  "dc",
  "m4",
  "let",
]);

/**
 * Text tools whose program can run commands: awk's `system()`, pipes and `getline`, sed's `e`
 * command and `s///e` flag. Their program is checked by these patterns; a program read from a file
 * (`-f`) is code the check cannot read.
 */
export const TEXT_CODE_RUNNERS: Readonly<Record<string, { code: RegExp; fileOptions: RegExp }>> = {
  awk: { code: /system|getline|\||>|@load|@include/, fileOptions: /^(-[fEil]|--(file|exec|include|load))/ },
  sed: {
    // `e` after an optional address (`1e cmd`, `$e`, `/x/e`), or as the flag of an `s` command.
    code: /(^|[;{}\n])\s*(?:[0-9$,~!+\s]*|\/(?:[^/\\]|\\.)*\/[IM]*[\s!]*)e|s(.)(?:(?!\2)[^\\]|\\.)*\2(?:(?!\2)[^\\]|\\.)*\2[gpiImM0-9w]*e/,
    fileOptions: /^(-f|--file)/,
  },
};

/**
 * Programs that run a command named by one of their options (or an old-style bundled flag letter):
 * `git -c alias.x='!…'`, `tar --checkpoint-action=exec=…`, `sort --compress-program=…`. The
 * patterns match one argument; `letters` are checked in tar's bundled first argument (`tar xIf`).
 */
export const COMMAND_OPTIONS: Readonly<Record<string, { options: RegExp; letters?: RegExp }>> = {
  git: {
    options:
      /^(-c|--config-env|--exec-path|--upload-pack|--receive-pack|-u|--extcmd|-x|--exec|--tool|-t|--template|--ext-diff|--textconv)$|^(--config-env|--exec-path|--upload-pack|--receive-pack|--extcmd|--exec|--tool|--template)=|^-c.|^(config|submodule|bisect|filter-branch|filter-repo|mergetool|difftool|daemon|instaweb|credential|archimport|cvsimport|svn|p4|send-email|rebase|hook)$/,
  },
  tar: {
    options:
      /^--(checkpoint-action|to-command|use-compress-program|info-script|new-volume-script|rsh-command|rmt-command|index-file)|^-(I|F)|^-[A-Za-z]*[IF]/,
    letters: /^[A-Za-z]*[IF]/,
  },
  zip: { options: /^(-TT|--unzip-command)|^-[A-Za-z]*TT/ },
  sort: { options: /^--compress-program/ },
  rsync: { options: /^(-e|--rsh|--rsync-path)|^-[A-Za-z]*e/ },
  scp: { options: /^-[A-Za-z]*[oSF]|^-J/ },
  sftp: { options: /^-[A-Za-z]*[oSFD]|^-J/ },
  less: { options: /^(-?\+|--lesskey|-k)/ },
  man: { options: /^(-P|--pager|-H|--html)/ },
  find: { options: /^-(exec|execdir|ok|okdir)$/ },
  ip: { options: /^exec$/ },
  dpkg: { options: /^--(pre-invoke|post-invoke)|^-i$/ },
  rpm: { options: /^--(eval|define|pipe)/ },
  openssl: { options: /^-engine/ },
};

/** Builtins that change what later names mean or run code later: never allowed without asking. */
export const SHELL_STATE_CHANGERS: ReadonlySet<string> = new Set([
  "source",
  ".",
  "eval",
  "alias",
  "unalias",
  "trap",
  "hash",
  "enable",
  "shopt",
  "set",
  "fc",
  "bind",
  "complete",
  "compgen",
  "coproc",
  "mapfile",
  "readarray",
]);

/** Variables whose value changes which program a name runs, or is itself run as a command or code. */
export const SENSITIVE_VARIABLES: ReadonlySet<string> = new Set([
  "PATH",
  "IFS",
  "ENV",
  "BASH_ENV",
  "SHELLOPTS",
  "BASHOPTS",
  "PS1",
  "PS2",
  "PS4",
  "PROMPT_COMMAND",
  "GLOBIGNORE",
  "CDPATH",
  "HOME",
  "SHELL",
  "EDITOR",
  "VISUAL",
  "PAGER",
  "MANPAGER",
  "BROWSER",
  "LESSOPEN",
  "LESSCLOSE",
  "SSH_ASKPASS",
  "SUDO_ASKPASS",
  "TAR_OPTIONS",
  "ZIPOPT",
  "XDG_CONFIG_HOME",
]);

/** Variable-name prefixes of the same kind (dynamic loaders, git, interpreters' startup options). */
export const SENSITIVE_VARIABLE_PREFIXES: readonly string[] = [
  "LD_",
  "DYLD_",
  "BASH_",
  "GIT_",
  "PERL",
  "PYTHON",
  "RUBY",
  "NODE_",
  "NPM_CONFIG_",
  "LUA_",
  "JAVA_TOOL",
  "_JAVA",
  "MAKE",
];

/** Folders whose programs are the system's, not something the command may have written. */
export const SYSTEM_PROGRAM_FOLDERS: readonly string[] = [
  "/bin",
  "/sbin",
  "/usr/bin",
  "/usr/sbin",
  "/usr/local/bin",
  "/usr/local/sbin",
];

/**
 * Programs whose options can never make them run anything: a glob in their arguments (which may
 * expand to a file name such as `--checkpoint-action=exec=…` that the command wrote) is harmless.
 */
export const GLOB_SAFE_PROGRAMS: ReadonlySet<string> = new Set([
  "ls",
  "cat",
  "head",
  "tail",
  "wc",
  "grep",
  "egrep",
  "fgrep",
  "echo",
  "printf",
  "stat",
  "file",
  "du",
  "diff",
  "cmp",
  "md5sum",
  "sha1sum",
  "sha256sum",
  "sha512sum",
  "mkdir",
  "rmdir",
  "rm",
  "cp",
  "mv",
  "ln",
  "chmod",
  "touch",
  "basename",
  "dirname",
  "realpath",
  "readlink",
  "nl",
  "cut",
  "tr",
  "uniq",
  "tac",
  "od",
  "xxd",
  "hexdump",
  "base64",
  "jq",
]);
