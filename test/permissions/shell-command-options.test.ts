import { beforeAll, describe, expect, it } from "vitest";
import { checkPermission } from "../../src/permissions/permission-check.js";
import { loadBashParser } from "../../src/permissions/shell-parser.js";

beforeAll(loadBashParser);

/** A bare allow with a deny rule: the analysis applies, and `rm` must never run unasked. */
const BARE = { allow: ["shell"], ask: [], deny: ["shell(rm *)"] };
/** The everyday rules of a coding agent: search tools allowed by name. */
const SEARCH = { allow: ["shell(rg *)", "shell(fd *)", "shell(fdfind *)"], ask: [], deny: ["shell(rm *)"] };

const decide = (command: string, permissions: typeof BARE) =>
  checkPermission(permissions, "shell", { kind: "shell", command }).decision;

describe("programs that run a command named in an option or operand", () => {
  // Each runs `rm` (or a script the agent wrote) by the program's own rules, no shell syntax needed.
  it.each([
    "rg --pre rm pattern",
    "rg --pre=rm pattern",
    "rg --pr rm pattern",
    "fd -x rm",
    "fd --exec rm",
    "fd -X rm",
    "fd --exec-batch rm",
    "fdfind -x rm",
    "cpulimit -l 10 rm keep",
    "ccache rm keep",
    "mpirun rm keep",
    "mpiexec rm keep",
    "concurrently 'rm keep'",
    "cross-env A=1 rm keep",
    "gdbserver :1234 rm keep",
    "duckdb -c '.shell rm keep'",
    "tsc-watch --onSuccess 'rm keep'",
  ])("never allows %s under a bare allow with a deny rule", (command) => {
    expect(decide(command, BARE)).not.toBe("allow");
  });

  it.each([
    "rename 's/a/`rm keep`/e' file",
    "perl-rename 's/a/`rm keep`/e' file",
    "prename 's/a/`rm keep`/e' file",
    "file-rename 's/a/`rm keep`/e' file",
    "mlr -n put 'end { system(\"rm keep\") }'",
    "RIPGREP_CONFIG_PATH=./rg.conf rg pattern",
  ])("never allows %s: Perl, Miller code or a config file of options runs", (command) => {
    expect(decide(command, BARE)).not.toBe("allow");
  });

  it.each([
    "rg --pre ./convert.sh pattern",
    "rg --search-zip pattern",
    "fd -x ./run.sh",
    "fd -e ts -X ./run.sh",
  ])("asks for %s although rg and fd are allowed: the option runs a program", (command) => {
    expect(decide(command, SEARCH)).toBe("ask");
  });

  it.each([
    "rg -n --hidden -g '*.ts' -i 'todo' src",
    "rg -l -t ts pattern",
    "rg --json -C 2 -e foo -e bar .",
    "rg --files --glob '!node_modules'",
    "fd -e ts -t f src",
    "fd -H -I --max-depth 2 name",
    "fdfind -a pattern",
  ])("still allows the everyday %s", (command) => {
    expect(decide(command, SEARCH)).toBe("allow");
  });
});

describe("the commands a sed or awk program runs meet the deny rules", () => {
  /** sed and awk trusted by name: their doubts are lifted, a deny rule still holds. */
  const TEXT_TOOLS = { allow: ["shell(sed *)", "shell(awk *)"], ask: [], deny: ["shell(rm *)"] };

  it.each([
    "sed 'e rm keep' file",
    "sed '1e rm keep' file",
    "sed 'v;e rm keep' file",
    "sed '/x/!e rm -rf keep' file",
    "sed '#n\ne rm keep' file",
    "sed -e 's/a/b/' -e 'e rm keep' file",
    "sed --expression='1{e rm keep\n}' file",
    "awk 'BEGIN { system(\"rm keep\") }'",
    "awk -e 'BEGIN { system(\"rm keep\") }'",
    "awk 'BEGIN { \"rm keep\" | getline x }'",
    "awk '{ print | \"rm keep\" }' file",
    "awk 'BEGIN { system(\"echo; rm keep\") }'",
    'awk \'BEGIN { c = "r" "m keep"; system(c) }\'',
  ])("denies %s", (command) => {
    expect(decide(command, TEXT_TOOLS)).toBe("deny");
  });

  it.each(["sed 's/rm keep/x/' file", "sed '1e date' file", "awk '{ print \"rm keep\" }' file"])(
    "still allows %s",
    (command) => {
      expect(decide(command, TEXT_TOOLS)).toBe("allow");
    },
  );
});

describe("tools that run the project's code or load its configuration as code", () => {
  // The agent can write the file each reads (`*.config.js`, mypy.ini's plugins, .pylintrc's
  // init-hook, .rubocop.yml's require, a script): like make or jest, they ask at best.
  it.each([
    "ssh-keygen -D ./provider.so",
    "babel-node script.js",
    "vite-node script.ts",
    "electron .",
    "pm2 start script.js",
    "next build",
    "turbo run build",
    "webpack-cli",
    "tailwindcss -i in.css -o out.css",
    "postcss in.css -o out.css",
    "mypy .",
    "pylint pkg",
    "rubocop",
    "rspec",
    "k6 run load.js",
    "uvicorn app:app",
    "prisma generate",
    "cdk synth",
  ])("asks for %s", (command) => {
    expect(decide(command, BARE)).toBe("ask");
  });
});
