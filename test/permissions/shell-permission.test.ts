import { beforeAll, describe, expect, it } from "vitest";
import { checkPermission } from "../../src/permissions/permission-check.js";
import { loadBashParser } from "../../src/permissions/shell-parser.js";

// The shell tool loads the parser on its first call; these checks call the permission check directly.
beforeAll(loadBashParser);

const rules = {
  allow: ["shell(git log*)", "shell(echo *)", "shell(ls *)", "shell(cat *)", "shell(sudo apt *)"],
  ask: ["shell(git push*)"],
  deny: ["shell(rm *)", "shell(touch *)"],
};

const decide = (command: string, permissions = rules) =>
  checkPermission(permissions, "shell", { kind: "shell", command }).decision;

describe("shell permissions", () => {
  it.each([
    "git log --oneline",
    "echo hello world",
    "ls -la | cat -n",
    "git log && echo done; ls",
    "echo 'rm -rf /'",
    'echo "touch is a word"',
    "ls # rm everything",
    "ls > out.txt 2>&1",
    "cat < input.txt",
    "env LANG=C git log",
    "sudo apt install jq",
    "(ls; echo hi)",
  ])("allows %s when every part is allowed", (command) => {
    expect(decide(command)).toBe("allow");
  });

  it.each([
    "rm -rf x",
    "rm",
    "/bin/rm x",
    "ls; rm x",
    "ls && rm x",
    "ls || rm x",
    "ls | rm x",
    "ls & rm x",
    "ls\nrm x",
    "r''m x",
    '"rm" x',
    "\\rm x",
    "r\\\nm x",
    "$'\\x72m' x",
    "echo $(rm x)",
    "echo `rm x`",
    "bash -c 'rm x'",
    'sh -ec "ls; rm x"',
    "env X=1 rm x",
    "sudo rm x",
    "timeout 5 rm x",
    "nice -n 5 rm x",
    "xargs rm < list",
    "find . -exec rm {} ;",
    "eval 'rm x'",
    "cat <(rm x)",
    "echo ${x:-$(rm x)}",
    "(rm x)",
    "{ rm x; }",
    "if true; then rm x; fi",
    "for f in a; do rm $f; done",
    "RM x",
    "echo hi > /dev/null; touch marker",
    "cat <<EOF\n$(touch marker)\nEOF",
    "watch 'rm x'",
    "busybox rm x",
    "command rm x",
    "exec rm x",
  ])("denies %j", (command) => {
    expect(decide(command)).toBe("deny");
  });

  it.each([
    "$CMD x",
    "r* x",
    "/bin/r? x",
    "{r,}m x",
    "echo $HOME",
    "git push origin main",
    "python3 -c 'import os'",
    "bash script.sh",
    "bash < script.sh",
    "curl example.com",
    "source ./env.sh",
    "alias ll='ls -l'",
    "PATH=/tmp ls",
    "env GIT_PAGER=cat git log",
    "export PATH=/tmp",
    "echo 'unterminated",
    "",
    "awk 'BEGIN { system(\"ls\") }'",
    "$'\\q' x",
    "{{secret:program}} x",
    "env {{secret:program}} x",
  ])("asks for %j (not allowed with confidence)", (command) => {
    expect(decide(command)).toBe("ask");
  });

  it("allows everything when a bare shell rule is allowed and nothing is denied or asked", () => {
    expect(decide("anything $(at) `all`", { allow: ["shell"], ask: [], deny: [] })).toBe("allow");
  });

  it("still denies in disguise under a bare allow", () => {
    expect(decide("bash -c 'r\"\"m x'", { allow: ["shell"], ask: [], deny: ["shell(rm *)"] })).toBe("deny");
  });

  it("says which rule denied", () => {
    const verdict = checkPermission(rules, "shell", { kind: "shell", command: "ls; sudo rm x" });
    expect(verdict.reason).toContain("shell(rm *)");
  });
});

describe("other tools", () => {
  const fileRules = { allow: ["read_file", "write_file(src/*)"], ask: [], deny: ["read_file(secrets/*)"] };
  const decideTexts = (tool: string, texts: string[]) =>
    checkPermission(fileRules, tool, { kind: "texts", texts }).decision;

  it("deny beats allow, and a resolved path is checked too", () => {
    expect(decideTexts("read_file", ["notes.md"])).toBe("allow");
    expect(decideTexts("read_file", ["secrets/key"])).toBe("deny");
    expect(decideTexts("read_file", ["link/key", "secrets/key"])).toBe("deny");
  });

  it("allows only what every subject matches, and asks for unlisted tools", () => {
    expect(decideTexts("write_file", ["src/a.ts"])).toBe("allow");
    expect(decideTexts("write_file", ["docs/a.md"])).toBe("ask");
    expect(decideTexts("http_request", ["https://example.com/"])).toBe("ask");
  });
});

describe("constructs that ask unless a rule spells them out", () => {
  const withRules = (allow: string[]) => ({ allow, ask: [], deny: ["shell(forbidden*)"] });

  it.each([
    ["make test", ["shell(make test)"], "allow"],
    ["make test", ["shell(make *)"], "allow"],
    ["make test", ["shell"], "ask"],
    ["git -c core.pager=cat log", ["shell(git -c core.pager=cat *)"], "allow"],
    ["git -c alias.x='!forbidden' x", ["shell(git *)"], "deny"],
    ["git -c alias.x='!ls' x", ["shell(git *)"], "ask"],
    ["python3 tool.py", ["shell(python3 *)"], "allow"],
    ["python3 tool.py", ["shell(*)"], "ask"],
    ["for f in a b; do echo $f; done", ["shell(for f in a b; do echo $f; done)"], "allow"],
    ["for f in a b; do echo $f; done", ["shell(for *)", "shell(echo *)"], "ask"],
    ["sudo apt install jq", ["shell(sudo apt *)"], "allow"],
  ])("%j with allow %j is %s", (command, allow, decision) => {
    expect(decide(command, withRules(allow))).toBe(decision);
  });

  it.each([
    "ls -la | grep x > out 2>&1",
    "git log --oneline && git status",
    "( cd src && ls )",
    "command -v forbidden",
    "ls *.md",
    "echo 'a;forbidden'",
  ])("allows the plain command %j under a bare allow with a deny rule", (command) => {
    expect(decide(command, withRules(["shell"]))).toBe("allow");
  });
});
