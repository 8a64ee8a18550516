import { existsSync, readFileSync, readdirSync } from "node:fs";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { RunControl } from "../../src/run-vocabulary/run-control.js";
import { isProcessRunning } from "../../src/processes/process-tree.js";
import { ToolHarness } from "../support/tool-harness.js";
import { waitFor } from "../support/wait-for.js";

const TRICKY = `'; touch PWNED; echo "$(id)`;

let harness: ToolHarness;
afterEach(() => harness.dispose());

/**
 * A tree of sleeps: one in the background, one under a nested bash, one that left the group. The
 * shell runs in its own PID namespace, so the host finds them by their command line: each tree
 * sleeps for a duration no other process on the machine sleeps for (another test's tree included).
 */
function sleepTree(): { command: string; pids(): number[] } {
  const seconds = `${300 + Math.floor(Math.random() * 1_000_000) / 1_000_000}`;
  return {
    command:
      `sleep ${seconds} & bash -c 'sleep ${seconds} & sleep ${seconds}; wait' & ` +
      `setsid sleep ${seconds} & echo started; wait`,
    pids: () =>
      readdirSync("/proc")
        .filter((entry) => /^\d+$/.test(entry))
        .filter((entry) => {
          try {
            return readFileSync(`/proc/${entry}/cmdline`, "latin1") === `sleep\0${seconds}\0`;
          } catch {
            return false;
          }
        })
        .map(Number),
  };
}

describe("the shell tool", () => {
  it("returns the exit code, stdout and stderr, and is ok only on exit code 0", async () => {
    harness = new ToolHarness({ permissions: { allow: ["shell"] } });
    const failed = await harness.call("shell", { command: "echo hello; echo oops >&2; exit 3" });
    expect(failed).toEqual({
      ok: false,
      code: "TOOL_FAILED",
      output: "exit code 3\nstdout:\nhello\n\nstderr:\noops\n",
    });
    const succeeded = await harness.call("shell", { command: "pwd" });
    expect(succeeded).toEqual({ ok: true, output: `exit code 0\nstdout:\n${harness.workdir}\n\nstderr:\n` });
  });

  it("keeps the beginning and the end of huge output, and stderr, within the output budget", async () => {
    harness = new ToolHarness({ permissions: { allow: ["shell"] }, settings: { max_output_bytes: 2_000 } });
    const command =
      "echo BEGIN; head -c 5000000 /dev/zero | tr '\\0' x; echo; echo END; " +
      "head -c 100000 /dev/zero | tr '\\0' y >&2; echo >&2; echo 'error: the build failed' >&2";
    const result = await harness.call("shell", { command });

    expect(result).toMatchObject({ ok: true, truncated: true });
    expect(result.output).toMatch(/^exit code 0\nstdout:\nBEGIN\nx+\n\[… \d+ bytes cut …\]\nx*\nEND\n/);
    expect(result.output).toMatch(/\nstderr:\ny+\n\[… \d+ bytes cut …\]\ny*\nerror: the build failed\n$/);
    expect(Buffer.byteLength(result.output)).toBeLessThanOrEqual(2_000);
  });

  it("kills the whole process tree at the timeout, capped by tools.shell_timeout", async () => {
    // Long enough for the sandbox and its four sleeps to start on a loaded machine.
    harness = new ToolHarness({ permissions: { allow: ["shell"] }, settings: { shell_timeout: 8_000 } });
    const tree = sleepTree();
    const call = harness.call("shell", { command: tree.command, timeout_seconds: 600 });
    await waitFor(() => tree.pids().length === 4, "the sleeps have started");
    const pids = tree.pids();
    const result = await call;

    expect(result).toMatchObject({ ok: false, code: "TOOL_TIMEOUT" });
    expect(result.output).toContain("timed out after 8 s");
    expect(result.output).toContain("started");
    await waitFor(() => pids.every((pid) => !isProcessRunning(pid)), "every sleep is gone");
  });

  it("kills the whole process tree when the run is stopped, and ends the call with the stop", async () => {
    harness = new ToolHarness({ permissions: { allow: ["shell"] } });
    const control = new RunControl();
    const tree = sleepTree();
    const call = harness.call("shell", { command: tree.command }, control);
    await waitFor(() => tree.pids().length === 4, "the sleeps have started");

    control.stop("user_stop", "stopped by the test");

    await expect(call).rejects.toMatchObject({ code: "RUN_ABORTED", reason: "user_stop" });
    const pids = tree.pids();
    await waitFor(() => pids.every((pid) => !isProcessRunning(pid)), "every sleep is gone");
  });

  it("leaves no process of a sandboxed call running once the call returns, with or without a host list", async () => {
    for (const sandbox of [undefined, { network: ["example.com"] }]) {
      harness = new ToolHarness({ permissions: { allow: ["shell"] }, ...(sandbox ? { sandbox } : {}) });
      const seconds = `${300 + Math.floor(Math.random() * 1_000_000) / 1_000_000}`;
      // Left in the background, one of them in a session of its own; the shell exits without waiting,
      // once it sees both in its /proc (the sandbox's own PID namespace).
      const sleeps = `for f in /proc/[0-9]*/cmdline; do [ "$(tr '\\0' ' ' < $f 2>/dev/null)" = 'sleep ${seconds} ' ] && echo; done`;
      const started = `[ "$(${sleeps} | wc -l)" = 2 ]`;
      const command = `sleep ${seconds} & setsid sleep ${seconds} & until ${started}; do sleep 0.05; done; echo started`;
      const result = await harness.call("shell", { command });

      expect(result).toMatchObject({ ok: true, output: expect.stringContaining("started") });
      const left = readdirSync("/proc").filter((entry) => {
        try {
          return readFileSync(`/proc/${entry}/cmdline`, "latin1") === `sleep\0${seconds}\0`;
        } catch {
          return false;
        }
      });
      expect(left).toEqual([]);
      harness.dispose(); // idempotent: afterEach disposes the last one again
    }
  });

  it("hides the daemon's vault variables from commands", async () => {
    harness = new ToolHarness({ permissions: { allow: ["shell"] } });
    process.env["AGENTD_SECRET_LEAKED"] = "daemon-side-secret";
    process.env["AGENTD_VAULT_KEY"] = "daemon-side-vault-key";
    try {
      const result = await harness.call("shell", { command: "env" });
      expect(result.ok).toBe(true);
      expect(result.output).toContain("PATH=");
      expect(result.output).not.toContain("daemon-side");
    } finally {
      delete process.env["AGENTD_SECRET_LEAKED"];
      delete process.env["AGENTD_VAULT_KEY"];
    }
  });
});

/**
 * A sleep that leaves the tree (new session, no marker) yet keeps stdout open; writes its pid. The
 * shell waits for the pid file: a tree kill at its exit could otherwise land before setsid ran.
 */
const ESCAPED_SLEEP =
  "setsid env -i sh -c 'echo $$ > escaped.tmp; mv escaped.tmp escaped; exec sleep 60' & " +
  "until [ -e escaped ]; do sleep 0.05; done";

describe("a process that escapes the tree but holds stdout open", () => {
  afterEach(async () => {
    const file = path.join(harness.workdir, "escaped");
    // A test that failed before the sleep started leaves nothing to kill.
    if (!existsSync(file)) return;
    const pid = Number(readFileSync(file, "utf8").trim());
    if (isProcessRunning(pid)) process.kill(pid, "SIGKILL");
  });

  it("does not keep a call open after the shell exited", async () => {
    harness = new ToolHarness({ permissions: { allow: ["shell"] } });
    const started = Date.now();
    const result = await harness.call("shell", { command: `${ESCAPED_SLEEP}; echo started` });

    expect(result).toEqual({ ok: true, output: "exit code 0\nstdout:\nstarted\n\nstderr:\n" });
    expect(Date.now() - started).toBeLessThan(30_000);
  });

  it("does not keep a call open past its timeout", async () => {
    harness = new ToolHarness({ permissions: { allow: ["shell"] }, settings: { shell_timeout: 2_000 } });
    const started = Date.now();
    const command = `(${ESCAPED_SLEEP}); echo started; sleep 120`;
    const result = await harness.call("shell", { command });

    expect(result).toMatchObject({ ok: false, code: "TOOL_TIMEOUT" });
    expect(result.output).toContain("started");
    expect(Date.now() - started).toBeLessThan(30_000);
  });
});

describe("secrets in shell commands", () => {
  const written = (file: string) => readFileSync(path.join(harness.workdir, file), "utf8");

  it.each([
    ["unquoted", "printf %s {{secret:tricky}} > out", TRICKY],
    ["inside a word", "printf %s pre{{secret:tricky}}post > out", `pre${TRICKY}post`],
    ["in double quotes", 'printf %s "a {{secret:tricky}} b" > out', `a ${TRICKY} b`],
    ["in single quotes", "printf %s 'a {{secret:tricky}} b' > out", `a ${TRICKY} b`],
    ["in $'…'", "printf %s $'a\\t{{secret:tricky}}' > out", `a\t${TRICKY}`],
    ["in $(…)", 'printf %s "$(printf %s {{secret:tricky}})" > out', TRICKY],
    ["in backticks", 'printf %s "`printf %s {{ secret:tricky }}`" > out', TRICKY],
    ["in ${…:-…}", 'printf %s "${UNSET:-{{secret:tricky}}}" > out', TRICKY],
    ["in an unquoted heredoc", "cat > out <<EOF\nkey={{secret:tricky}}\nEOF", `key=${TRICKY}\n`],
    ["after a comment with a quote", "# don't\nprintf %s {{secret:tricky}} > out", TRICKY],
    [
      "twice, with another",
      "printf '%s|%s|%s' {{secret:tricky}} {{secret:plain}} \"{{secret:tricky}}\" > out",
      `${TRICKY}|plain-value|${TRICKY}`,
    ],
  ])("arrive intact %s and execute nothing", async (_where, command, expected) => {
    harness = new ToolHarness({
      permissions: { allow: ["shell"] },
      secrets: { tricky: TRICKY, plain: "plain-value" },
    });
    const result = await harness.call("shell", { command });

    expect(result).toMatchObject({ ok: true });
    expect(written("out")).toBe(expected);
    expect(existsSync(path.join(harness.workdir, "PWNED"))).toBe(false);
  });

  it("never shows a value: the command in events keeps the template, the output is masked", async () => {
    harness = new ToolHarness({ permissions: { allow: ["shell"] }, secrets: { tricky: TRICKY } });
    const result = await harness.call("shell", { command: "echo {{secret:tricky}}" });

    expect(result.output).toBe("exit code 0\nstdout:\n[secret:tricky]\n\nstderr:\n");
    expect(JSON.stringify(harness.events)).not.toContain(TRICKY);
    expect(harness.events[0]?.data).toMatchObject({ arguments: { command: "echo {{secret:tricky}}" } });
  });

  it.each([
    ["a quoted heredoc", "cat > out <<'EOF'\n{{secret:tricky}}\nEOF"],
    ["arithmetic", "echo $(( {{secret:tricky}} + 1 ))"],
    ["arithmetic inside $(…)", "echo $( (( {{secret:tricky}} )) )"],
    ["an unquoted [[ … ]] test", "[[ {{secret:tricky}} -eq 1 ]] && echo x > out"],
    ["an array index", "a[{{secret:tricky}}]=1; echo x > out"],
    // bash joins `EO\⏎F` into the closing `EOF`; where the template then stands is not read with confidence.
    [
      "a command after a heredoc closed by a continued line",
      "cat >/dev/null <<EOF\nEO\\\nF\nprintf %s {{secret:tricky}} > out",
    ],
  ])("refuses a template in %s, where no reference is safe", async (_where, command) => {
    harness = new ToolHarness({ permissions: { allow: ["shell"] }, secrets: { tricky: TRICKY } });
    const result = await harness.call("shell", { command });

    expect(result).toMatchObject({ ok: false, code: "TOOL_BAD_ARGUMENTS" });
    expect(existsSync(path.join(harness.workdir, "out"))).toBe(false);
  });

  it.each([
    ["the script of bash -c", "bash -c 'printf %s {{secret:tricky}} > out'"],
    ["the script of sh -c", 'sh -c "printf %s {{secret:tricky}} > out"'],
    ["an eval argument", 'eval "printf %s {{secret:tricky}} > out"'],
    ["the script of a wrapped shell", "sudo -u nobody env bash -c 'printf %s {{secret:tricky}} > out'"],
    ["code given to an interpreter", "python3 -c 'print(\"{{secret:tricky}}\")' > out"],
    ["a script given to ssh", "ssh example.invalid 'printf %s {{secret:tricky}}' > out"],
  ])(
    "refuses a template in %s, which would run its value as code, and runs nothing",
    async (_where, body) => {
      harness = new ToolHarness({ permissions: { allow: ["shell"] }, secrets: { tricky: TRICKY } });
      const result = await harness.call("shell", { command: `touch ran; ${body}` });

      expect(result).toMatchObject({ ok: false, code: "TOOL_BAD_ARGUMENTS" });
      expect(result.output).toContain(`X={{secret:tricky}} bash -c 'use "$X"'`);
      for (const file of ["ran", "out", "PWNED"])
        expect(existsSync(path.join(harness.workdir, file))).toBe(false);
    },
  );

  it.each([
    ["an assignment prefix", "X={{secret:tricky}} bash -c 'printf %s \"$X\" > out'"],
    ["env", "env X={{secret:tricky}} sh -c 'printf %s \"$X\" > out'"],
    ["a positional argument", "bash -c 'printf %s \"$1\" > out' _ {{secret:tricky}}"],
  ])("passes a template to a nested shell safely through %s", async (_where, command) => {
    harness = new ToolHarness({ permissions: { allow: ["shell"] }, secrets: { tricky: TRICKY } });
    const result = await harness.call("shell", { command });

    expect(result).toMatchObject({ ok: true });
    expect(written("out")).toBe(TRICKY);
    expect(existsSync(path.join(harness.workdir, "PWNED"))).toBe(false);
  });
});
