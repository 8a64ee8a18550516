import { spawn } from "node:child_process";
import { once } from "node:events";
import { chmodSync } from "node:fs";
import { prepareSandboxedChild } from "../../src/sandbox/sandboxed-child.js";
import type { SandboxPolicy } from "../../src/sandbox/sandbox-policy.js";
import { SandboxProject } from "./sandbox-project.js";

/** The uid and gid of `nobody`: the kernel exempts root, which runs these tests, from the process limit. */
export const NOBODY = 65534;

/** A project a non-root bubblewrap can enter (its root is made only for the owner). */
export function projectForNobody(): SandboxProject {
  const made = new SandboxProject();
  chmodSync(made.root, 0o755);
  chmodSync(made.workdir, 0o777);
  return made;
}

/**
 * Starts `command` in the sandbox as `nobody`, as the daemon of a packaged install would
 * (non-root): the child, its preparation (release it once done), its output so far on demand,
 * and its whole output once it closed.
 */
export async function startAsNobody(policy: SandboxPolicy, command: string, args: string[]) {
  const prepared = await prepareSandboxedChild(policy, {
    command,
    arguments: args,
    workdir: policy.workdir,
    environment: { PATH: "/usr/bin:/bin", HOME: "/tmp" },
  });
  const child = spawn(prepared.command, prepared.arguments, {
    cwd: "/",
    env: prepared.environment,
    uid: NOBODY,
    gid: NOBODY,
    stdio: ["ignore", "pipe", "pipe", ...prepared.extraStdio],
  });
  prepared.started(child);
  let output = "";
  child.stdout?.on("data", (chunk: Buffer) => (output += chunk.toString("utf8")));
  child.stderr?.on("data", (chunk: Buffer) => (output += chunk.toString("utf8")));
  /** Resolves with the output so far once it matches `pattern` (or the child ended). */
  const waitFor = (pattern: RegExp) =>
    new Promise<string>((resolve) => {
      const check = () => {
        if (pattern.test(output) || child.exitCode !== null || child.signalCode !== null) resolve(output);
      };
      child.stdout?.on("data", check);
      child.stderr?.on("data", check);
      child.on("close", check);
      check();
    });
  const ended = once(child, "close").then(() => output);
  return { child, prepared, waitFor, ended };
}
