import { existsSync, rmSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ToolHarness } from "../support/tool-harness.js";

const RULES = {
  allow: ["shell(echo *)", "shell(ls *)", "shell(cat *)"],
  deny: ["shell(rm *)", "shell(touch *)"],
};

/**
 * How a disguise must be refused: `rule` — a deny rule catches it statically, no human is asked;
 * `ask` — the check cannot know statically what runs (a name built at run time, code on stdin,
 * an interpreter), so a human is asked, and the test gate says no.
 */
type Refusal = "rule" | "ask";

/** Disguised attempts to run `touch marker` (or `rm keep`) although touch and rm are denied. */
const DISGUISES: Array<[string, Refusal]> = [
  ["touch marker", "rule"],
  ["t''ouch marker", "rule"],
  ['"touch" marker', "rule"],
  ["'touch' marker", "rule"],
  ['tou"ch" marker', "rule"],
  ["\\touch marker", "rule"],
  ["touc\\h marker", "rule"],
  ["/usr/bin/touch marker", "rule"],
  ["/usr/bin/../bin/touch marker", "rule"],
  ['"/usr/bin/touch" marker', "rule"],
  ["$'\\x74ouch' marker", "rule"],
  ["$'\\164ouch' marker", "rule"],
  ["$'touch' marker", "rule"],
  ["echo x; touch marker", "rule"],
  ["echo x;touch marker", "rule"],
  ["ls && touch marker", "rule"],
  ["ls -z || touch marker", "rule"],
  ["echo x | touch marker", "rule"],
  ["ls & touch marker", "rule"],
  ["echo x\ntouch marker", "rule"],
  ["echo x # comment\ntouch marker", "rule"],
  ["echo $(touch marker)", "rule"],
  ['echo "$(touch marker)"', "rule"],
  ["echo `touch marker`", "rule"],
  ["echo $(echo $(touch marker))", "rule"],
  ["ls $(touch marker)", "rule"],
  ["echo hi > $(touch marker)", "rule"],
  ["cat <(touch marker)", "rule"],
  ["ls > >(touch marker)", "rule"],
  ["echo ${x:-$(touch marker)}", "rule"],
  ["echo $((1 + $(touch marker)))", "rule"],
  ["cat <<EOF\n$(touch marker)\nEOF", "rule"],
  ["(touch marker)", "rule"],
  ["{ touch marker; }", "rule"],
  ["if true; then touch marker; fi", "rule"],
  ["for f in marker; do touch $f; done", "rule"],
  ["while true; do touch marker; break; done", "rule"],
  ["f() { touch marker; }; f", "rule"],
  ["! touch marker", "rule"],
  ["X=1 touch marker", "rule"],
  ["sh -c 'touch marker'", "rule"],
  ['bash -c "touch marker"', "rule"],
  ['bash -c \'bash -c "t\\"\\"ouch marker"\'', "rule"],
  ["sh -ec 'echo x; touch marker'", "rule"],
  ["eval 'touch marker'", "rule"],
  ['eval "tou""ch marker"', "rule"],
  ["env touch marker", "rule"],
  ["env -i PATH=/usr/bin touch marker", "rule"],
  ["env -- touch marker", "rule"],
  ["env -S 'touch marker'", "rule"],
  ["command touch marker", "rule"],
  ["command -p touch marker", "rule"],
  ["builtin eval touch marker", "rule"],
  ["exec touch marker", "rule"],
  ["exec -a name touch marker", "rule"],
  ["nohup touch marker", "rule"],
  ["timeout 5 touch marker", "rule"],
  ["nice -n 1 touch marker", "rule"],
  ["time touch marker", "rule"],
  ["echo marker | xargs touch", "rule"],
  ["xargs -a /dev/null touch marker", "rule"],
  ["echo touch marker | xargs -I{} sh -c '{}'", "ask"],
  ["find . -maxdepth 0 -exec touch marker \\;", "rule"],
  ["sudo touch marker", "rule"],
  ["coproc touch marker", "rule"],
  ["T=touch; $T marker", "ask"],
  ["$(echo touch) marker", "ask"],
  ["`echo touch` marker", "ask"],
  ["${T:-touch} marker", "ask"],
  ['"$(printf touch)" marker', "ask"],
  ["touch${IFS}marker", "ask"],
  ["{touch,marker}", "ask"],
  ["echo x; {touch,marker}", "ask"],
  ["/usr/bin/t?uch marker", "ask"],
  ["/usr/bin/tou[c]h marker", "ask"],
  ["T=touch eval '$T marker'", "ask"],
  ['bash <<< "touch marker"', "ask"],
  ["sh -s <<< 'touch marker'", "ask"],
  ["echo touch marker | bash", "ask"],
  ["printf 'touch marker' | sh", "ask"],
  ["source <(echo touch marker)", "ask"],
  ['. /dev/stdin <<< "touch marker"', "ask"],
  ["alias t=touch; t marker", "rule"],
  ["python3 -c \"import pathlib; pathlib.Path('marker').touch()\"", "ask"],
  ["node -e \"require('fs').writeFileSync('marker', '')\"", "ask"],
  ["perl -e 'open(F, \">marker\")'", "ask"],
  ["awk 'BEGIN { system(\"touch marker\") }'", "rule"],
  // A line ending in a backslash joins the next in an unquoted heredoc: `EO\⏎F` closes `<<EOF`.
  ["cat <<EOF\nEO\\\nF\ntouch marker\nEOF", "rule"],
  // Arithmetic evaluates a variable's value as code: `a[$(touch marker)]` runs touch.
  ["echo='a[$(touch marker)]'; (( echo ))", "ask"],
  ["cat='a[$(touch marker)]'; [[ cat -eq 0 ]]", "ask"],
  ["ls='a[$(touch marker)]'; if [[ ls -gt 1 ]]; then echo; fi", "ask"],
  ["x='b[$(touch marker)]'; a[x]=1", "ask"],
  ["x='b[$(touch marker)]'; y=$((x))", "ask"],
  ["x='b[$(touch marker)]'; echo $[x]", "ask"],
  ["x='b[$(touch marker)]'; y=${a[x]}", "ask"],
  ["x='b[$(touch marker)]'; y=${!x}", "ask"],
  ["x='b[$(touch marker)]'; cat < ${a[x]}", "ask"],
  ["x='b[$(touch marker)]'; cat <<EOF\n$[x]\nEOF", "ask"],
  // Code that runs before or around the command: startup files, BASH_ENV, prompt expansion.
  ["echo 'touch marker' > rc; bash --rcfile ./rc -i -c 'echo hi'", "ask"],
  ["bash -l -c 'echo hi'", "ask"],
  ["echo touch marker > evil; env BASH_ENV=./evil bash -c 'echo hi'", "ask"],
  ["x='$(touch marker)'; y=${x@P}", "ask"],
  ["x='$(touch marker)'; cat <<EOF\n${x@P}\nEOF", "ask"],
  ["r''m keep", "rule"],
  ["/bin/rm keep", "rule"],
  ["command rm keep", "rule"],
  ["echo x && $'\\x72m' keep", "rule"],
  ["ls; r\\m -f keep", "rule"],
];

let harness: ToolHarness;

beforeAll(() => {
  harness = new ToolHarness({ permissions: RULES });
});
afterAll(() => harness.dispose());

describe("shell deny rules against disguised commands", () => {
  it("lets the allowed programs run (the refusals below are not blanket)", async () => {
    writeFileSync(path.join(harness.workdir, "keep"), "kept\n");
    const result = await harness.call("shell", { command: "echo hi && ls | cat; cat keep" });
    expect(result).toEqual({ ok: true, output: "exit code 0\nstdout:\nhi\nkeep\nkept\n\nstderr:\n" });
  });

  it.each(DISGUISES)("refuses %j (%s) and nothing runs", async (command, refusal) => {
    // A marker left by an earlier failure must not fail this case too.
    rmSync(path.join(harness.workdir, "marker"), { force: true });
    writeFileSync(path.join(harness.workdir, "keep"), "kept\n");
    const asked = harness.approvalRequests.length;

    const result = await harness.call("shell", { command });

    expect(result).toMatchObject({ ok: false, code: "TOOL_DENIED" });
    const how = harness.approvalRequests.length > asked ? "ask" : "rule";
    expect(how).toBe(refusal);
    expect(existsSync(path.join(harness.workdir, "marker"))).toBe(false);
    expect(existsSync(path.join(harness.workdir, "keep"))).toBe(true);
  });
});

describe("the same disguises under a bare allow: [shell] with the deny rules", () => {
  let open: ToolHarness;
  beforeAll(() => {
    open = new ToolHarness({ permissions: { allow: ["shell"], deny: RULES.deny } });
  });
  afterAll(() => open.dispose());

  it.each(DISGUISES)("refuses %j and nothing runs", async (command) => {
    rmSync(path.join(open.workdir, "marker"), { force: true });
    writeFileSync(path.join(open.workdir, "keep"), "kept\n");

    const result = await open.call("shell", { command });

    expect(result).toMatchObject({ ok: false, code: "TOOL_DENIED" });
    expect(existsSync(path.join(open.workdir, "marker"))).toBe(false);
    expect(existsSync(path.join(open.workdir, "keep"))).toBe(true);
  });
});

describe("the marker check itself", () => {
  it("sees the marker when touch is allowed, so a bypass would be caught", async () => {
    const open = new ToolHarness({ permissions: { allow: ["shell"] } });
    try {
      const result = await open.call("shell", { command: "$'\\x74ouch' marker" });
      expect(result.ok).toBe(true);
      expect(existsSync(path.join(open.workdir, "marker"))).toBe(true);
    } finally {
      open.dispose();
    }
  });
});
