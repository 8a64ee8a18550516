import { execFileSync } from "node:child_process";
import {
  chmodSync,
  existsSync,
  mkdtempSync,
  readdirSync,
  realpathSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ToolHarness } from "../support/tool-harness.js";

/**
 * The classes of words bash or a program turns into code (issue 25), each disguise proven by
 * running it through real bash in the sandbox: with every command allowed, `forbidden` (a program on
 * PATH that leaves `marker`) runs; under `allow: [shell]` with `deny: [shell(forbidden*)]` the call
 * is refused (denied, or asked and refused by the test's approval gate) and nothing runs.
 */
const FORBIDDEN = "#!/bin/sh\n: > marker\n";

/** [command, programs it needs]. */
const DISGUISES: Array<[command: string, needs: string[]]> = [
  // An array subscript in a variable name is arithmetic, which runs `$(…)`, even single-quoted.
  ["printf -v 'a[$(forbidden)]' x", []],
  ["printf -va'[$(forbidden)]' x", []],
  ["read 'a[$(forbidden)]' <<< x", []],
  ["read -r 'a[$(forbidden)]' <<< x", []],
  ["echo x | { read 'a[$(forbidden)]'; }", []],
  ["test -v 'a[$(forbidden)]'", []],
  ["[ -v 'a[$(forbidden)]' ]", []],
  ["test ! -v 'a[$(forbidden)]'", []],
  ["[ -n x -a -v 'a[$(forbidden)]' ]", []],
  ["declare 'a[$(forbidden)]=1'", []],
  ["typeset 'a[$(forbidden)]=1'", []],
  ["declare -g 'a[$(forbidden)]=1'", []],
  ["builtin declare 'a[$(forbidden)]=1'", []],
  ["command typeset -x 'a[$(forbidden)]=1'", []],
  ["f() { local 'a[$(forbidden)]=1'; }; f", []],
  ["a=(1 2); unset 'a[$(forbidden)]'", []],
  ["a['$(forbidden)']=1", []],
  // The index may be a variable name whose value is evaluated in turn.
  ["x='a[$(forbidden)]'; test -v 'b[x]'", []],
  ["x='a[$(forbidden)]'; b=(1); unset 'b[x]'", []],
  ["x='a[$(forbidden)]'; b[x]=1", []],
  ["x='a[$(forbidden)]'; (( x ))", []],
  ["x='a[$(forbidden)]'; [[ x -eq 0 ]]", []],
  ["x='a[$(forbidden)]'; echo $((x))", []],
  ["x='a[$(forbidden)]'; y=${a[x]}", []],
  ["x=hello; y='a[$(forbidden)]'; echo ${x:y}", []],
  ["[[ 1 -eq 'a[$(forbidden)]' ]]", []],
  ["[[ -v 'a[$(forbidden)]' ]]", []],
  ["let 'a[$(forbidden)]'", []],
  // Every value of a variable declared integer is arithmetic, however it is assembled.
  ["declare -i v='a[$(forbidden)]'", []],
  ["declare -i v; v='a[$(forbidden)]'", []],
  ["typeset -i v=0; v+='a[$(forbidden)]'", []],
  ["declare -il v=5; v+=' + a[$(forbidden)]'", []],
  ["x='a[$(forbidden)]'; declare -i v=x", []],
  ["declare -i v=1; read v <<< 'b[$(forbidden)]'", []],
  ["declare -i v=1; printf -v v %s 'b[$(forbidden)]'", []],
  ["declare -i v=1; export v='b[$(forbidden)]'", []],
  ["declare -ai v; v=('b[$(forbidden)]')", []],
  ["declare -i v; : ${v:='b[$(forbidden)]'}", []],
  // Variables bash itself keeps as integers.
  ["RANDOM='a[$(forbidden)]'", []],
  ["OPTIND='a[$(forbidden)]'", []],
  ["read SRANDOM <<< 'a[$(forbidden)]'", []],
  ["printf -v OPTIND %s 'a[$(forbidden)]'", []],
  ["export RANDOM='a[$(forbidden)]'", []],
  ["declare HISTCMD='a[$(forbidden)]'", []],
  // A name reference, and an array value that declare parses again.
  ["declare -n r='a[$(forbidden)]'; r=1", []],
  ["declare -n r; r='a[$(forbidden)]'; r=1", []],
  ["declare -A a='([$(forbidden)]=1)'", []],
  ["declare -a a='([$(forbidden)]=1)'", []],
  // Options missing from the old table, and abbreviations of long options.
  ["seq 3 | split --filter='forbidden' -l 1", ["split", "seq"]],
  ["seq 3 | split --filt='forbidden' -l 1", ["split", "seq"]],
  ["seq 3 | split -l 1 --fil forbidden", ["split", "seq"]],
  ["ssh-agent forbidden", ["ssh-agent"]],
  ["ssh-agent -- forbidden", ["ssh-agent"]],
  ["echo x > f; git grep --no-index -Oforbidden x", ["git"]],
  ["echo x > f; git grep --no-index -O'forbidden' -e x", ["git"]],
  ["echo x > f; git grep --no-index --open-files-in-pager=forbidden x", ["git"]],
  ["echo x > f; git grep --no-index --open-files=forbidden x", ["git"]],
  ["echo a > a; echo b > b; git difftool --no-index -y --extcmd=forbidden a b", ["git"]],
  ["echo a > a; echo b > b; git difftool --no-index -y -x forbidden a b", ["git"]],
  ["V='!forbidden' git --config-env=alias.x=V x", ["git"]],
  ["wget -q --use-askpass=forbidden http://127.0.0.1:9/", ["wget"]],
  ["wget -q --use-ask=forbidden http://127.0.0.1:9/", ["wget"]],
  ["wget -q -e use_askpass=forbidden http://127.0.0.1:9/", ["wget"]],
  ["echo x > f; tar -cf a.tar f; tar -xf a.tar --to-comm=forbidden", ["tar"]],
  ["echo x > f; tar --use-compress=forbidden -cf out.tar f", ["tar"]],
  ["echo x > f; tar --checkpoint=1 --checkpoint-act=exec=forbidden -cf /dev/null f", ["tar"]],
  ["echo x > f; tar cIf forbidden out.tar f", ["tar"]],
  ["echo x > f; zip -q o.zip f; zip -T --unzip-command=forbidden o.zip", ["zip"]],
  ["echo x > f; zip -q o.zip f; zip -T --unzip-c=forbidden o.zip", ["zip"]],
  ["seq 1 100000 | sort -S 1K -T . --compress-prog=forbidden > /dev/null", ["sort", "seq"]],
  ["echo x > f; install -s --strip-program=forbidden f g", ["install"]],
  ["echo x > f; install -s --strip-prog=forbidden f g", ["install"]],
  ["echo a > a; echo b > b; sdiff --diff-program=forbidden a b", ["sdiff"]],
  ["echo a > a; diff3 --diff-prog=forbidden a a a", ["diff3"]],
  ["echo x > f; LESSOPEN='|forbidden %s' less f", ["less"]],
  ["echo x > f; tar -cf a.tar f; TAR_OPTIONS=--to-command=forbidden tar -xf a.tar", ["tar"]],
  // sed's `e` command and `s///e` flag in every spelling of the script.
  ["echo x | sed --expression='1e forbidden'", ["sed"]],
  ["echo x | sed --expr='1e forbidden'", ["sed"]],
  ["echo x | sed -n --e='1e forbidden'", ["sed"]],
  ["echo x | sed '/x/,/y/e forbidden'", ["sed"]],
  ["echo forbidden | sed e", ["sed"]],
  ["echo x | sed 's/x/forbidden/;e'", ["sed"]],
  ["echo x | sed -e 's/x/forbidden/' -e e", ["sed"]],
  ["echo x | sed 's|x|forbidden|e'", ["sed"]],
  ["echo x | sed 'y/a/b/;s/x/forbidden/e'", ["sed"]],
  ["echo x | sed -e '1{e forbidden' -e '}'", ["sed"]],
  ["echo x | sed '0~1e forbidden'", ["sed"]],
  ["echo x | sed '1!G;1 e forbidden'", ["sed"]],
  // awk's ways to run a command, and wrappers read past abbreviated options.
  ["awk -- 'BEGIN { system(\"forbidden\") }'", ["awk"]],
  ["awk -v x=1 'BEGIN { \"forbidden\" | getline }'", ["awk"]],
  ['awk \'BEGIN { printf "" | "forbidden" }\'', ["awk"]],
  ["timeout --kill=1 5 forbidden", ["timeout"]],
  ["env --ch=. forbidden", []],
  ["nice --adj=1 forbidden", ["nice"]],
  ["echo | xargs --max-a=1 forbidden", ["xargs"]],
  ["flock . forbidden", ["flock"]],
  ["mapfile -C forbidden -c 1 a <<< x", []],
];

let harness: ToolHarness;
let binFolder: string;
const savedPath = process.env["PATH"];

/** Whether each program is on PATH, asked once per program (not once per disguise that needs it). */
const installedPrograms = new Map<string, boolean>();

function installed(program: string): boolean {
  let found = installedPrograms.get(program);
  if (found === undefined) {
    try {
      execFileSync("sh", ["-c", `command -v ${program}`], { stdio: "ignore" });
      found = true;
    } catch {
      found = false;
    }
    installedPrograms.set(program, found);
  }
  return found;
}

/** An empty workdir: what an earlier case left must not decide this one. */
function emptyWorkdir(workdir: string): void {
  for (const entry of readdirSync(workdir))
    rmSync(path.join(workdir, entry), { recursive: true, force: true });
}

beforeAll(() => {
  binFolder = realpathSync(mkdtempSync(path.join(tmpdir(), "agentd-forbidden-bin-")));
  writeFileSync(path.join(binFolder, "forbidden"), FORBIDDEN);
  chmodSync(path.join(binFolder, "forbidden"), 0o755);
  process.env["PATH"] = `${binFolder}${path.delimiter}${savedPath ?? ""}`;
  harness = new ToolHarness({
    permissions: { allow: ["shell"], deny: ["shell(forbidden*)"] },
    sandbox: { read: [binFolder] },
  });
});
afterAll(() => {
  process.env["PATH"] = savedPath;
  harness.dispose();
  rmSync(binFolder, { recursive: true, force: true });
});

describe("words bash or a program turns into code, with allow: [shell] and deny: [shell(forbidden*)]", () => {
  it("has at least 54 disguises", () => {
    expect(DISGUISES.length).toBeGreaterThanOrEqual(54);
  });

  it.each(DISGUISES)("refuses %j, and nothing runs", async (command) => {
    emptyWorkdir(harness.workdir);
    const result = await harness.call("shell", { command });

    expect(result).toMatchObject({ ok: false, code: "TOOL_DENIED" });
    expect(existsSync(path.join(harness.workdir, "marker"))).toBe(false);
  });
});

// Each case has its own harness and workdir, and mostly waits on its sandboxed shell: they run side by side.
describe.concurrent("the disguises themselves", () => {
  it.each(DISGUISES)("%j does run forbidden when every command is allowed", async (command, needs) => {
    // ssh-agent makes a unix socket, which the sandbox's seccomp filter refuses: its proof runs with
    // the filter off, as it is for a daemon whose config lists `sandbox.unix_sockets`.
    const filterOff = needs.includes("ssh-agent");
    const open = new ToolHarness({
      permissions: { allow: ["shell"] },
      sandbox: { read: [binFolder] },
      ...(filterOff
        ? { adjustPolicy: (policy) => ({ ...policy, unixSockets: [path.join(binFolder, "listed.sock")] }) }
        : {}),
    });
    try {
      if (!needs.every(installed)) return;
      await open.call("shell", { command, timeout_seconds: 10 });
      expect(existsSync(path.join(open.workdir, "marker"))).toBe(true);
    } finally {
      open.dispose();
    }
  });
});
