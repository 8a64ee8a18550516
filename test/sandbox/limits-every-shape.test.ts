import { afterEach, describe, expect, it } from "vitest";
import { SandboxSettingsSchema } from "../../src/config/sandbox-settings.js";
import type { SandboxProject } from "./sandbox-project.js";
import { projectForNobody, startAsNobody } from "./sandboxed-as-nobody.js";

/**
 * Whatever shape a sandboxed command has (a shell's `-c` script, a shell with options before it,
 * a command that starts a shell itself, a script file), what it runs has the process limit as a
 * hard limit, and cannot raise it. Run as `nobody`: root is exempt. (Behind a host list's handoff:
 * resource-bombs.test.ts.)
 */
let project: SandboxProject | undefined;
afterEach(() => {
  project?.dispose();
  project = undefined;
});

/** What `command args` prints in a sandbox of 77 processes at most, started as `nobody`. */
async function outputOf(command: string, args: string[]) {
  const made = (project ??= projectForNobody());
  const policy = made.host().policyFor({
    settings: {
      ...SandboxSettingsSchema.parse({}),
      limits: { processes: 77, nice: 10 },
      unix_sockets: [],
    },
    workdir: made.workdir,
    owner: 'agent "shapes"',
  });
  const { prepared, ended } = await startAsNobody(policy, command, args);
  const output = await ended;
  await prepared.release();
  return output;
}

/** The hard limit, then whether raising it failed. */
const PROBE =
  "ulimit -Hu 2>/dev/null || ulimit -Hp; ulimit -u 100000 2>/dev/null || ulimit -p 100000 2>/dev/null || echo refused";

describe("the process limit of a sandboxed command, whatever its shape", () => {
  it.each([
    ["bash -c", "bash", ["-c", PROBE]],
    ["sh -c (dash)", "sh", ["-c", PROBE]],
    ["/bin/bash -c, a script starting with #!", "/bin/bash", ["-c", `#!/bin/bash\n${PROBE}`]],
    ["bash with options before -c", "bash", ["-O", "extglob", "-c", PROBE]],
    ["sh -ec", "sh", ["-ec", PROBE]],
    ["env bash -c", "env", ["bash", "-c", PROBE]],
    ["exec of another shell", "bash", ["-c", `exec dash -c '${PROBE}'`]],
    [
      "a script file",
      "bash",
      ["-c", `printf '%s\\n' '#!/bin/sh' '${PROBE}' >probe && chmod +x probe && ./probe`],
    ],
  ])("holds for %s", { timeout: 60_000 }, async (_shape, command, args) => {
    expect(await outputOf(command, args as string[])).toBe("77\nrefused\n");
  });
});
