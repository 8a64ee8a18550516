import { chmodSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, expect, it } from "vitest";
import { PROCESS_MARKER_VARIABLE } from "../../src/processes/find-tree-members.js";
import { processesHolding } from "../support/process-holders.js";
import { ToolHarness } from "../support/tool-harness.js";

let harness: ToolHarness | undefined;
let folder: string | undefined;
afterEach(() => {
  harness?.dispose();
  harness = undefined;
  if (folder !== undefined) rmSync(folder, { recursive: true, force: true });
  folder = undefined;
});

/**
 * bubblewrap binds its sandbox's init to itself (PR_SET_PDEATHSIG) only once the sandbox is set
 * up: killed by a signal before that (a call's deadline, the OOM killer), it leaves the init, and
 * the command it goes on to start, running. A stand-in bubblewrap that is killed with a child of
 * its own still running shows that case; it passes the daemon's probe by running the real one.
 */
it("ends what a sandbox left when bubblewrap was killed by a signal, not only when it exited", async () => {
  folder = mkdtempSync(path.join(tmpdir(), "agentd-killed-bwrap-"));
  const seconds = `${500 + Math.floor(Math.random() * 1_000_000) / 1_000_000}`;
  const bubblewrap = path.join(folder, "bwrap");
  writeFileSync(
    bubblewrap,
    [
      "#!/bin/bash",
      `if [ -n "$${PROCESS_MARKER_VARIABLE}" ]; then (setsid sleep ${seconds} &); kill -KILL $$; fi`,
      'exec /usr/bin/bwrap "$@"',
    ].join("\n"),
  );
  chmodSync(bubblewrap, 0o755);
  harness = new ToolHarness({
    permissions: { allow: ["shell"] },
    adjustPolicy: (policy) => ({ ...policy, searchPath: folder as string }),
  });

  await harness.call("shell", { command: "true" });

  expect(processesHolding(seconds)).toEqual([]);
});
