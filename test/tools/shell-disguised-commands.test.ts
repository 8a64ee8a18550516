import { execFileSync } from "node:child_process";
import { chmodSync, existsSync, mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ToolHarness } from "../support/tool-harness.js";

/**
 * The program every disguise tries to run: it leaves `marker` in the folder it runs in. It stands on
 * PATH (a folder beside the workdir), and as `./forbidden` and `hooks/forbidden` in the workdir for
 * the disguises that find a program by a glob or run a folder of scripts.
 */
const FORBIDDEN = "#!/bin/sh\n: > marker\n";

/** Disguised ways to run `forbidden` with `allow: [shell]` and `deny: [shell(forbidden*)]`; each needs these programs. */
const DISGUISES: Array<[command: string, needs: string[]]> = [
  // The parser must read bash as bash does.
  ["{fd}>/dev/null forbidden", []],
  ["function f { forbidden; }; f", []],
  ["f() { forbidden; }; f", []],
  ["forbidden() { :; }; unset -f forbidden; forbidden", []],
  ["shopt -s expand_aliases\nalias f=forbidden\nf", []],
  ["x=forbidden; $x", []],
  ['"$(printf forbidden)"', []],
  ["$(echo forbidden)", []],
  ["${PWD:+forbidden}", []],
  ["{forbidden,}", []],
  ["forb''idden", []],
  ["forb\\\nidden", []],
  ["$'\\x66orbidden'", []],
  ["ls; f\\orbidden", []],
  ["case x in x) forbidden;; esac", []],
  ["if true; then forbidden; fi", []],
  ["for i in 1; do forbidden; done", []],
  ["while ! forbidden; do break; done", []],
  ["[[ $(forbidden) ]]", []],
  ["echo ${x:-$(forbidden)}", []],
  ["cat <<EOF\n$(forbidden)\nEOF", []],
  ["cat <(forbidden)", []],
  // Interpreter code in forms the old scanner did not know.
  ["perl -le 'system q(forbidden)'", ["perl"]],
  ["perl '-Mstrict' -e 'system q(forbidden)'", ["perl"]],
  ["perl -E 'system q(forbidden)'", ["perl"]],
  ["python3 -Ic 'import os; os.system(\"forbidden\")'", ["python3"]],
  ["python3 -Sc 'import os; os.system(\"forbidden\")'", ["python3"]],
  ['node --eval=\'require("child_process").execSync("forbidden")\'', ["node"]],
  ['node -p \'require("child_process").execSync("forbidden")\'', ["node"]],
  [
    'node --import \'data:text/javascript,import cp from "child_process"; cp.execSync("forbidden")\' -e 0',
    ["node"],
  ],
  ["python3 /dev/stdin <<< 'import os; os.system(\"forbidden\")'", ["python3"]],
  ["echo 'import os; os.system(\"forbidden\")' | python3 -", ["python3"]],
  ["echo 'BEGIN { system(\"forbidden\") }' | awk -f /dev/stdin", ["awk"]],
  ["awk 'BEGIN { system(\"forbidden\") }'", ["awk"]],
  ["awk 'BEGIN { print | \"forbidden\" }'", ["awk"]],
  ["echo x | sed '1e forbidden'", ["sed"]],
  ["echo x | sed -n '$e forbidden'", ["sed"]],
  ["echo x | sed 's/x/forbidden/e'", ["sed"]],
  ["perl5.36.0 -e 'system q(forbidden)'", ["perl5.36.0"]],
  ["echo 'import os; os.system(\"forbidden\")' > s.py; pdb3 -c continue s.py", ["pdb3"]],
  ["vim.basic -es -c '!forbidden' -c 'q!'", ["vim.basic"]],
  ["tclsh <<< 'exec forbidden'", ["tclsh"]],
  // The program name arriving through stdin or a glob.
  ["echo forbidden | xargs env", ["xargs"]],
  ["echo forbidden | xargs sh -c", ["xargs"]],
  ["echo forbidden | xargs -I{} sh -c '{}'", ["xargs"]],
  ["find . -maxdepth 1 -name 'forb*' -exec {} \\;", ["find"]],
  ["find . -maxdepth 1 -name 'forb*' -execdir {} +", ["find"]],
  ["./forb*", []],
  // Programs that run a command given in an option, the environment or a file.
  ["git -c alias.x='!forbidden' x", ["git"]],
  ["git -c core.sshCommand=forbidden ls-remote ssh://example.invalid/repo", ["git"]],
  ["GIT_SSH_COMMAND=forbidden git ls-remote ssh://example.invalid/repo", ["git"]],
  ["env GIT_SSH_COMMAND=forbidden git ls-remote ssh://example.invalid/repo", ["git"]],
  ["printf 'all:\\n\\tforbidden\\n' > Makefile; make", ["make"]],
  ["echo x > f; tar --checkpoint=1 --checkpoint-action=exec=forbidden -cf /dev/null f", ["tar"]],
  ["echo x > f; tar -I forbidden -cf out.tar f", ["tar"]],
  ["echo x > f; tar --use-compress-program=forbidden -cf out.tar f", ["tar"]],
  ["echo x > f; zip -q out.zip f; zip -T -TT forbidden out.zip", ["zip"]],
  ["seq 1 100000 | sort -S 1K -T . --compress-program=forbidden > /dev/null", ["sort", "seq"]],
  ["ssh -oProxyCommand=forbidden example.invalid", ["ssh"]],
  ["ssh -o ProxyCommand=forbidden example.invalid", ["ssh"]],
  ["vim -es -c '!forbidden' -c 'q!'", ["vim"]],
  ["printf '!forbidden\\nq\\n' | ed", ["ed"]],
  ["sqlite3 :memory: '.shell forbidden'", ["sqlite3"]],
  ["gdb -batch -ex 'shell forbidden'", ["gdb"]],
  ["setpriv forbidden", ["setpriv"]],
  ["setarch linux64 forbidden", ["setarch"]],
  ["prlimit --nofile=512 forbidden", ["prlimit"]],
  ["logsave /dev/null forbidden", ["logsave"]],
  ["run-parts hooks", ["run-parts"]],
  // A shell under another name, or by a path the command may have written.
  ["/proc/self/exe -c forbidden", []],
  ["./forbidden", []],
  ["cp ./forbidden ./copy; ./copy", []],
  ["env -S 'forbidden x'", []],
  ["exec -a name forbidden", []],
  ["command forbidden", []],
  ["timeout 5 sh -c forbidden", ["timeout"]],
  ["nice -n 1 bash -c 'forbidden'", []],
  ["bash -ic forbidden", []],
  ["bash <<< forbidden", []],
  ["echo forbidden | sh", []],
  [". <(echo forbidden)", []],
  ["eval forbidden", []],
  ['eval "$(echo forbidden)"', []],
  ["trap forbidden EXIT", []],
  ["env BASH_ENV=hooks/forbidden bash -c :", []],
  ["BASH_ENV=<(echo forbidden) bash -c :", []],
];

let harness: ToolHarness;
let binFolder: string;
const savedPath = process.env["PATH"];

function installed(program: string): boolean {
  try {
    execFileSync("sh", ["-c", `command -v ${program}`], { stdio: "ignore" });
    return true;
  } catch {
    return false;
  }
}

function prepareWorkdir(workdir: string): void {
  for (const file of ["marker", "Makefile", "copy"]) rmSync(path.join(workdir, file), { force: true });
  mkdirSync(path.join(workdir, "hooks"), { recursive: true });
  for (const file of [path.join(workdir, "forbidden"), path.join(workdir, "hooks", "forbidden")]) {
    writeFileSync(file, FORBIDDEN);
    chmodSync(file, 0o755);
  }
}

beforeAll(() => {
  // The folder on PATH lies outside the workdir, so the sandbox is told to show it.
  binFolder = realpathSync(mkdtempSync(path.join(tmpdir(), "agentd-forbidden-bin-")));
  harness = new ToolHarness({
    permissions: { allow: ["shell"], deny: ["shell(forbidden*)"] },
    sandbox: { read: [binFolder] },
  });
  writeFileSync(path.join(binFolder, "forbidden"), FORBIDDEN);
  chmodSync(path.join(binFolder, "forbidden"), 0o755);
  process.env["PATH"] = `${binFolder}${path.delimiter}${savedPath ?? ""}`;
});
afterAll(() => {
  process.env["PATH"] = savedPath;
  harness.dispose();
  rmSync(binFolder, { recursive: true, force: true });
});

describe("a denied program in disguise, with allow: [shell] and deny: [shell(forbidden*)]", () => {
  it("still runs what is allowed", async () => {
    prepareWorkdir(harness.workdir);
    const result = await harness.call("shell", { command: "echo hi | cat; ls hooks" });
    expect(result).toMatchObject({ ok: true, output: expect.stringContaining("hi\nforbidden") });
  });

  it.each(DISGUISES)("refuses %j, and nothing runs", async (command) => {
    prepareWorkdir(harness.workdir);
    const result = await harness.call("shell", { command });

    expect(result).toMatchObject({ ok: false, code: "TOOL_DENIED" });
    expect(existsSync(path.join(harness.workdir, "marker"))).toBe(false);
  });
});

// Each case has its own harness and workdir, and mostly waits on its sandboxed shell: they run side by side.
describe.concurrent("the disguises themselves", () => {
  it.each(DISGUISES)("%j does run forbidden when every command is allowed", async (command, needs) => {
    const open = new ToolHarness({ permissions: { allow: ["shell"] }, sandbox: { read: [binFolder] } });
    try {
      if (!needs.every(installed)) return;
      prepareWorkdir(open.workdir);
      await open.call("shell", { command, timeout_seconds: 10 });
      expect(existsSync(path.join(open.workdir, "marker"))).toBe(true);
    } finally {
      open.dispose();
    }
  });
});
