import { beforeAll, describe, expect, it, vi } from "vitest";
import { loadBashParser } from "../../src/permissions/shell-parser.js";
import { matchesUnmadeName, scriptCandidates } from "../../src/sandbox/script-candidates.js";

const base = "/srv/project";
const known = { HOME: "/home/operator" };
const paths = (command: string | string[]) => scriptCandidates(command, base, known).paths;
const names = (command: string | string[]) => scriptCandidates(command, base, known).names;

beforeAll(loadBashParser);

describe("the scripts a hook command runs", () => {
  it("are the programs named with a path and the files interpreters are given", () => {
    expect(paths("./audit-log.sh")).toEqual(["/srv/project/audit-log.sh"]);
    expect(paths("sh gates/reviewer-gate.sh")).toEqual(["/srv/project/gates/reviewer-gate.sh"]);
    expect(paths("cd tools && bash -e gate.sh --strict")).toEqual(["/srv/project/tools/gate.sh"]);
    expect(paths("MODE=ci node hooks/check.js; /opt/bin/notify")).toEqual([
      "/srv/project/hooks/check.js",
      "/opt/bin/notify",
    ]);
  });

  it("are read from an MCP server's command and arguments as written", () => {
    expect(paths(["node", "--no-warnings", "tools/server.js", "--port", "7"])).toEqual([
      "/srv/project/tools/server.js",
    ]);
    // No shell reads an argument list: `~` is a file name there.
    expect(paths(["node", "~/server.js"])).toEqual(["/srv/project/~/server.js"]);
  });

  it("are not the files a command only reads or writes", () => {
    expect(paths("cat > last-run.json")).toEqual([]);
    expect(paths(`if grep -q '"read_file"'; then cat secret.txt >&2; exit 2; fi`)).toEqual([]);
    expect(names("cat > last-run.json")).toEqual([]);
  });

  it("are found under ~ and $HOME, in quotes and escapes, as the shell expands them", () => {
    expect(paths("~/hooks/gate.sh")).toEqual(["/home/operator/hooks/gate.sh"]);
    expect(paths("$HOME/x.sh; ${HOME}/y.sh")).toEqual(["/home/operator/x.sh", "/home/operator/y.sh"]);
    expect(paths(`sh "$HOME/my hooks/gate.sh"`)).toEqual(["/home/operator/my hooks/gate.sh"]);
    expect(paths(`sh 'gates/a b.sh' && sh gates/c\\ d.sh`)).toEqual([
      "/srv/project/gates/a b.sh",
      "/srv/project/gates/c d.sh",
    ]);
  });

  it("are found past interpreter options that take a value, and in the files options load", () => {
    expect(paths("python3 -X dev gate.py")).toEqual(["/srv/project/gate.py"]);
    expect(paths("python3 -W ignore -u gate.py")).toEqual(["/srv/project/gate.py"]);
    expect(paths("bash -o posix gate.sh")).toEqual(["/srv/project/gate.sh"]);
    expect(paths("bash --rcfile rc.sh -i")).toEqual(["/srv/project/rc.sh"]);
    expect(paths("node --require ./a.js b.js")).toEqual(["/srv/project/a.js", "/srv/project/b.js"]);
    expect(paths("node -r a b.js")).toEqual(["/srv/project/a", "/srv/project/b.js"]);
    expect(paths("node --import=./setup.mjs --input-type module server.mjs")).toEqual([
      "/srv/project/setup.mjs",
      "/srv/project/server.mjs",
    ]);
    expect(paths("python3 -m tools.gate")).toEqual([
      "/srv/project/tools/gate.py",
      "/srv/project/tools/gate/__main__.py",
      "/srv/project/tools/gate/__init__.py",
    ]);
    expect(paths("bash < gate.sh")).toEqual(["/srv/project/gate.sh"]);
  });

  it("are found in a command line a shell, eval or a wrapper runs", () => {
    expect(paths("sh -c 'cd gates && ./x.sh'")).toEqual(["/srv/project/gates/x.sh"]);
    expect(paths("bash -ec 'sh y.sh'")).toEqual(["/srv/project/y.sh"]);
    expect(paths("eval ./z.sh")).toEqual(["/srv/project/z.sh"]);
    for (const command of [
      "nohup ./w.sh",
      "command ./w.sh",
      "stdbuf -oL ./w.sh",
      "stdbuf -o L ./w.sh",
      "setsid -w ./w.sh",
      "ionice -c 3 ./w.sh",
      "timeout -s KILL 30 ./w.sh",
      "nice -n 5 sh w.sh",
      "env -u DEBUG MODE=ci ./w.sh",
      "flock /tmp/lock -c ./w.sh",
      "sudo -u ci ./w.sh",
    ])
      expect(paths(command), command).toEqual(["/srv/project/w.sh"]);
    expect(paths("runner --fast gate.sh")).toEqual(["/srv/project/gate.sh"]);
  });

  it("take every later word when an option is not known (it may take the script as its value)", () => {
    expect(paths("node --some-new-option ./a.js b.js")).toEqual(["/srv/project/a.js", "/srv/project/b.js"]);
    expect(paths("timeout --new x ./w.sh")).toEqual(["/srv/project/x", "/srv/project/w.sh"]);
  });

  it("count by file name where the folder or the program is known only when the command runs", () => {
    expect(names(`"$CLAUDE_PROJECT_DIR"/hooks/gate.sh`)).toEqual(["gate.sh"]);
    expect(names("python3 ${TOOLS}/check-$MODE.py")).toEqual(["check-*.py"]);
    expect(names(`cd "$(git rev-parse --show-toplevel)" && sh gates/gate.sh`)).toEqual(["gate.sh"]);
    expect(names("sh `pwd`/g.sh")).toEqual(["g.sh"]);
    expect(names("sh gates/*.sh")).toEqual(["*.sh"]);
    expect(names("$RUNNER audit")).toEqual(["audit"]);
  });

  it("count every word by name in a command that builds what it runs (xargs, find -exec, sh -c $X)", () => {
    expect(names("ls gates | xargs -n1 sh")).toEqual(["ls", "gates", "xargs", "sh"]);
    expect(names("find gates -name '*.sh' -exec sh {} ;")).toContain("*.sh");
    expect(names(`sh -c "$HOOK_COMMAND" gate.sh`)).toContain("gate.sh");
  });

  it("are where PATH would find a program named without a path, builtins aside", () => {
    const onPath = (command: string) => scriptCandidates(command, base, { PATH: "/usr/bin:bin:" }).onPath;
    expect(onPath("audit-tool --check && echo ok")).toEqual([
      "/usr/bin/audit-tool",
      "/srv/project/bin/audit-tool",
      "/srv/project/audit-tool",
    ]);
    expect(onPath("cd tools; nohup gate")).toEqual([
      "/usr/bin/gate",
      "/srv/project/tools/bin/gate",
      "/srv/project/tools/gate",
    ]);
    expect(onPath("exit 2")).toEqual([]);
  });

  it("are read by the bash grammar: heredocs, brace expansion, substitutions and subshells", () => {
    expect(paths("bash <<'EOF'\n./gates/x.sh\nEOF\n")).toEqual(["/srv/project/gates/x.sh"]);
    expect(paths("sh <<< ./y.sh")).toEqual(["/srv/project/y.sh"]);
    expect(paths("cat <<EOF\n$(./report.sh)\nEOF\n")).toEqual(["/srv/project/report.sh"]);
    expect(paths("sh gates/{a,b}.sh")).toEqual(["/srv/project/gates/a.sh", "/srv/project/gates/b.sh"]);
    expect(paths(`sh "$(./pick-gate.sh)" --strict`)).toContain("/srv/project/pick-gate.sh");
    expect(paths("(cd tools && sh a.sh); sh b.sh")).toEqual(["/srv/project/tools/a.sh", "/srv/project/b.sh"]);
    expect(names("sh gates/gate{1..3}.sh")).toEqual(["gate*.sh"]);
  });

  it("match a file name by the pattern, `*` for any text", () => {
    expect(matchesUnmadeName(["check-*.py"], "check-ci.py")).toBe(true);
    expect(matchesUnmadeName(["check-*.py"], "check.py")).toBe(false);
    expect(matchesUnmadeName(["gate.sh"], "gate.sh")).toBe(true);
    expect(matchesUnmadeName(["gate.sh"], "gate.shx")).toBe(false);
  });
});

describe("what Node runs in place of a missing script", () => {
  const resolved = (command: string | string[]) => scriptCandidates(command, base, known).resolved;

  it("is the name with the extensions Node adds, and a bare module an option loads in each node_modules", () => {
    expect(resolved("node gates/server")).toContain("/srv/project/gates/server.js");
    expect(resolved(["bun", "run", "tools/server.ts"])).toContain("/srv/project/tools/server.ts.js");
    expect(resolved("node -r setup b.js")).toEqual(
      expect.arrayContaining([
        "/srv/project/node_modules/setup.js",
        "/srv/project/node_modules/setup",
        "/srv/node_modules/setup.cjs",
        "/node_modules/setup.mjs",
      ]),
    );
    // The main script is never looked for in node_modules, and python adds nothing.
    expect(resolved("node b.js")).not.toContain("/srv/project/node_modules/b.js");
    expect(resolved("python3 gate.py && sh gate.sh")).toEqual([]);
  });

  it("counts by name, with Node's extensions, where the folder is known only when it runs", () => {
    expect(names(`node "$PROJECT"/server`)).toEqual(
      expect.arrayContaining(["server", "server.js", "server.mjs"]),
    );
  });
});

describe("a hook command read before the bash grammar is loaded", () => {
  it("counts every word by file name rather than fail", async () => {
    // A fresh copy of the modules, whose grammar nothing has loaded.
    vi.resetModules();
    const fresh = await import("../../src/sandbox/script-candidates.js");
    expect(fresh.scriptCandidates("sh gates/gate.sh && ./x.sh $MODE", base, known)).toEqual({
      paths: [],
      names: ["sh", "gate.sh", "x.sh"],
      onPath: [],
      resolved: [],
    });
  });
});
