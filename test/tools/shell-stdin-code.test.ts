import { existsSync, readFileSync } from "node:fs";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { ToolHarness } from "../support/tool-harness.js";

/** A value that, run as code, writes a file (`touch PWNED`) and prints its second half. */
const CODE_LIKE = "alpha-part; touch PWNED; echo beta-part";

let harness: ToolHarness;
afterEach(() => harness.dispose());

describe("a secret template fed to a shell or interpreter as code", () => {
  it.each([
    ["a heredoc into bash", "bash <<EOF\necho {{secret:k}}\nEOF"],
    ["a pipe into sh", "echo 'echo {{secret:k}}' | sh"],
    ["a here-string into bash", "bash <<< 'echo {{secret:k}}'"],
    ["source of stdin", "source /dev/stdin <<< 'echo {{secret:k}}'"],
    [". of a process substitution", ". <(echo 'echo {{secret:k}}')"],
    ["bash of a process substitution", "bash <(echo 'echo {{secret:k}}')"],
    ["a heredoc piped into bash", "cat <<EOF | bash\necho {{secret:k}}\nEOF"],
    ["a pipe into python3 reading stdin", "echo 'print(\"{{secret:k}}\")' | python3"],
    ["a wrapped shell on stdin", "echo 'echo {{secret:k}}' | sudo -u nobody sh -s"],
    ["eval of a substitution", 'eval "$(echo {{secret:k}})"'],
    ["bash -c of a substitution", 'bash -c "$(echo {{secret:k}})"'],
  ])("is refused in %s, and nothing runs", async (_form, body) => {
    harness = new ToolHarness({ permissions: { allow: ["shell"] }, secrets: { k: CODE_LIKE } });
    const result = await harness.call("shell", { command: `touch ran; ${body}` });

    expect(result).toMatchObject({ ok: false, code: "TOOL_BAD_ARGUMENTS" });
    expect(result.output).toContain(`X={{secret:k}} bash -c 'use "$X"'`);
    for (const file of ["ran", "PWNED"]) expect(existsSync(path.join(harness.workdir, file))).toBe(false);
  });

  it.each([
    [
      "a variable set for the shell that reads the heredoc",
      "X={{secret:k}} bash <<'EOF'\nprintf %s \"$X\" > out\nEOF",
    ],
    ["a pipe into a program that is not a shell", "printf %s {{secret:k}} | cat > out"],
    [
      "a pipe into inline code that reads it as data",
      "printf %s {{secret:k}} | python3 -c 'import sys; print(sys.stdin.read(), end=\"\")' > out",
    ],
  ])("is allowed through %s, as data", async (_form, command) => {
    harness = new ToolHarness({ permissions: { allow: ["shell"] }, secrets: { k: CODE_LIKE } });
    const result = await harness.call("shell", { command });

    expect(result).toMatchObject({ ok: true });
    expect(readFileSync(path.join(harness.workdir, "out"), "utf8")).toBe(CODE_LIKE);
    expect(existsSync(path.join(harness.workdir, "PWNED"))).toBe(false);
  });

  it("refuses, quickly, a command too complex to tell whether it feeds code to a shell", async () => {
    harness = new ToolHarness({ permissions: { allow: ["shell"] }, secrets: { k: CODE_LIKE } });
    const started = Date.now();
    const result = await harness.call("shell", {
      command: `touch ran; echo {{secret:k}}; ${"watch ".repeat(300)}ls`,
    });

    expect(result).toMatchObject({ ok: false, code: "TOOL_BAD_ARGUMENTS" });
    expect(existsSync(path.join(harness.workdir, "ran"))).toBe(false);
    expect(Date.now() - started).toBeLessThan(10_000);
  });
});
