import { randomBytes } from "node:crypto";
import { policyWith } from "../sandbox/lazy-sandbox-policy.js";
import type { SandboxPolicy } from "../sandbox/sandbox-policy.js";
import { holdWorkdir } from "../tools/workdir/held-workdir.js";
import { openBeneath } from "../tools/workdir/open-beneath.js";

/** The folder of the agent's workdir that webhook payloads are written to. */
export const PAYLOAD_FOLDER = ".agentd/payloads";

/**
 * Writes a webhook's raw body as a new file of the agent's workdir and returns its path relative to
 * the workdir: `.agentd/payloads/<trigger>-<time>-<random>.json`. The workdir belongs to the agent,
 * whose commands may have put symlinks anywhere in it: the path is opened the way the file tools
 * open one (each name looked up under the folder already held, a symlink resolved inside the
 * workdir, never out of it, the file created with O_EXCL), and nothing is written where the
 * agent's sandbox hides. A read-only workdir still gets the file (the daemon writes it for the
 * agent to read), but never in a place the sandbox keeps read-only even in a writable workdir.
 */
export async function writePayloadFile(options: {
  workdir: string;
  sandbox: SandboxPolicy;
  trigger: string;
  body: Buffer;
  now: Date;
}): Promise<string> {
  // A read-only workdir is written as if it were writable, and no further: what the sandbox keeps
  // read-only inside any workdir (agents folders, `.git/hooks`…) stays so, whatever a link says.
  const sandbox: SandboxPolicy =
    options.sandbox.mode === "read-only"
      ? policyWith(options.sandbox, { mode: "workspace-write" })
      : options.sandbox;
  const workdir = holdWorkdir({ workdir: options.workdir, sandbox }, { create: true });
  const stamp = options.now
    .toISOString()
    .replace(/[-:]/g, "")
    .replace(/\.\d+Z$/, "Z");
  const relative = `${PAYLOAD_FOLDER}/${options.trigger}-${stamp}-${randomBytes(4).toString("hex")}.json`;
  try {
    const opened = await openBeneath(workdir, relative, { kind: "write", append: false });
    try {
      if (!opened.created || !opened.info.isFile()) {
        throw new Error(`${relative} exists already or is not a regular file`);
      }
      await opened.handle.writeFile(options.body);
    } finally {
      await opened.handle.close();
    }
    return opened.relative;
  } finally {
    await workdir.directory.release();
  }
}
