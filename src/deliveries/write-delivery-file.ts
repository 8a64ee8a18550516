import type { SandboxPolicy } from "../sandbox/sandbox-policy.js";
import { holdWorkdir } from "../tools/workdir/held-workdir.js";
import { openBeneath } from "../tools/workdir/open-beneath.js";
import { errnoCodeOf } from "../util/errno-code.js";
import { type AttemptOutcome, permanentFailure } from "./attempt-outcome.js";

/**
 * Appends the message to `requested` inside the agent's workdir, through the file tools' own
 * opening (each name looked up under the held workdir, symlinks resolved inside it and refused
 * when they lead out, a file with other hard links refused, the agent's sandbox obeyed): a
 * delivery never writes anywhere the agent could not.
 */
export async function writeDeliveryFile(
  place: { workdir: string; sandbox: SandboxPolicy } | undefined,
  requested: string,
  text: string,
): Promise<AttemptOutcome> {
  if (place === undefined) return permanentFailure("the agent is no longer defined: its workdir is unknown");
  let workdir;
  try {
    workdir = holdWorkdir(place, { create: true });
  } catch (error) {
    return { ok: false, error: `cannot open the workdir: ${describe(error)}`, retryable: true };
  }
  try {
    const opened = await openBeneath(workdir, requested, { kind: "write", append: true });
    try {
      if (!opened.info.isFile()) return permanentFailure(`${requested} is not a regular file`);
      await opened.handle.writeFile(text.endsWith("\n") ? text : `${text}\n`, "utf8");
      return { ok: true };
    } finally {
      await opened.handle.close();
    }
  } catch (error) {
    const code = errnoCodeOf(error);
    const retryable = code === "ENOSPC" || code === "EDQUOT" || code === "EROFS" || code === "EIO";
    return { ok: false, error: `cannot write ${requested}: ${describe(error)}`, retryable };
  } finally {
    await workdir.directory.release();
  }
}

function describe(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
