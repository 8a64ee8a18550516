import { mkdtempSync, rmSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import type { SandboxPolicy } from "../../src/sandbox/sandbox-policy.js";
import { processesOutliving } from "../support/process-holders.js";
import { ToolHarness } from "../support/tool-harness.js";

let harness: ToolHarness | undefined;
const folders: string[] = [];
afterEach(() => {
  harness?.dispose();
  harness = undefined;
  for (const folder of folders.splice(0)) rmSync(folder, { recursive: true, force: true });
});

/** A search path with bubblewrap and no perl: the host list goes through the node bridge. */
function withoutPerl(policy: SandboxPolicy): SandboxPolicy {
  const folder = mkdtempSync(path.join(tmpdir(), "agentd-noperl-"));
  folders.push(folder);
  symlinkSync("/usr/bin/bwrap", path.join(folder, "bwrap"));
  return { ...policy, searchPath: folder };
}

/**
 * Every way a shell leaves something behind: in the background, in a session of its own, double
 * forked, ignoring the signals a shell's end sends, stopped, and holding a zombie. The shell waits
 * until each is running (seen in the sandbox's own /proc), then exits without waiting for them.
 */
function leftovers(seconds: string): string {
  const sleeps = `for f in /proc/[0-9]*/cmdline; do [ "$(tr '\\0' ' ' < $f 2>/dev/null)" = 'sleep ${seconds} ' ] && echo; done`;
  const count = `${sleeps} | wc -l`;
  return [
    `sleep ${seconds} &`,
    `setsid sleep ${seconds} &`,
    `(sleep ${seconds} &) ;`,
    `nohup sleep ${seconds} >/dev/null 2>&1 &`,
    `bash -c 'trap "" TERM HUP INT; sleep ${seconds}; :' &`,
    `sleep ${seconds} & kill -STOP $! ;`,
    `bash -c 'true & exec sleep ${seconds}' &`,
    `until [ "$(${count})" -ge 6 ]; do sleep 0.05; done; echo started`,
  ].join(" ");
}

describe("a sandboxed shell call leaves nothing running once it returns", () => {
  it.each([
    ["no network", {}, undefined],
    ["read-only, no network", { sandbox: { mode: "read-only" } }, undefined],
    ["a host list (perl's handoff)", { sandbox: { network: ["example.com"] } }, undefined],
    ["a host list (the node bridge)", { sandbox: { network: ["example.com"] } }, withoutPerl],
  ] as const)("with %s", async (_name, options, adjustPolicy) => {
    harness = new ToolHarness({
      permissions: { allow: ["shell"] },
      ...options,
      ...(adjustPolicy ? { adjustPolicy } : {}),
    });
    const seconds = `${400 + Math.floor(Math.random() * 1_000_000) / 1_000_000}`;
    const result = await harness.call("shell", { command: leftovers(seconds) });
    expect(result).toMatchObject({ ok: true, output: expect.stringContaining("started") });
    expect(await processesOutliving(seconds)).toEqual([]);
  });
});
