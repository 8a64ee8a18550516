import { existsSync, readFileSync } from "node:fs";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { ToolHarness } from "../support/tool-harness.js";

/** A value that, run as code, writes a file (`touch PWNED`). */
const CODE_LIKE = "Bearer x; touch PWNED; echo y";

let harness: ToolHarness;
afterEach(() => harness.dispose());

describe("a secret template given to a wrapper or an interpreter", () => {
  it.each([
    ["an argument under xargs", "echo x | xargs -n 1 -I{} printf %s 'token {{secret:k}}' > out"],
    ["an argument of find -exec", "find . -maxdepth 0 -exec printf %s 'token {{secret:k}}' ';' > out"],
    [
      "an argument after a node script",
      "printf %s 'process.stdout.write(process.argv[2])' > app.js; node app.js 'token {{secret:k}}' > out",
    ],
    [
      "an option after a python script",
      "printf %s 'import sys; print(sys.argv[2], end=\"\")' > s.py; python3 s.py --token 'token {{secret:k}}' > out",
    ],
  ])("is passed as data in %s", async (_where, command) => {
    harness = new ToolHarness({ permissions: { allow: ["shell"] }, secrets: { k: CODE_LIKE } });
    const result = await harness.call("shell", { command });

    expect(result).toMatchObject({ ok: true });
    expect(readFileSync(path.join(harness.workdir, "out"), "utf8")).toBe(`token ${CODE_LIKE}`);
    expect(existsSync(path.join(harness.workdir, "PWNED"))).toBe(false);
  });

  it("is passed as data after sudo's options (sudo may be missing or refuse: not a template error)", async () => {
    harness = new ToolHarness({ permissions: { allow: ["shell"] }, secrets: { k: CODE_LIKE } });
    const command = "sudo -n -E -u nobody printf %s 'token {{secret:k}}' > /dev/null";
    const result = await harness.call("shell", { command });

    expect(result.code).not.toBe("TOOL_BAD_ARGUMENTS");
    expect(result.output).not.toContain("cannot be used");
    expect(existsSync(path.join(harness.workdir, "PWNED"))).toBe(false);
  });

  it.each([
    ["sudo -s", "sudo -s 'printf %s {{secret:k}}'"],
    ["a shell under sudo's options", "sudo -E -u nobody bash -c 'printf %s {{secret:k}}'"],
    ["a shell under xargs", "echo x | xargs -n1 sh -c 'printf %s {{secret:k}}'"],
    ["a shell under find -exec", "find . -exec sh -c 'printf %s {{secret:k}}' ';'"],
    ["an unterminated find -exec", "find . -exec sh -c 'printf %s {{secret:k}}'"],
    ["python -c", "python3 -c 'print(\"{{secret:k}}\")'"],
    ["node --eval=", "node --eval='console.log(\"{{secret:k}}\")'"],
    ["perl -e after another -e", "perl -e 1 -e 'print \"{{secret:k}}\"'"],
    ["inline code after a node option", "node -r ./x.js -e 'console.log(\"{{secret:k}}\")'"],
    ["a sed program that runs its result", "echo x | sed -e 's/x/{{secret:k}}/e'"],
    ["an awk program", "awk 'BEGIN { print \"{{secret:k}}\" }'"],
  ])("is refused as code in %s, and nothing runs", async (_where, body) => {
    harness = new ToolHarness({ permissions: { allow: ["shell"] }, secrets: { k: CODE_LIKE } });
    const result = await harness.call("shell", { command: `touch ran; ${body}` });

    expect(result).toMatchObject({ ok: false, code: "TOOL_BAD_ARGUMENTS" });
    for (const file of ["ran", "PWNED"]) expect(existsSync(path.join(harness.workdir, file))).toBe(false);
  });
});
