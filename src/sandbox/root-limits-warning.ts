import type { Logger } from "../logging/logger.js";
import type { SandboxMode } from "../config/sandbox-settings.js";

/**
 * What the process limit does not do when the daemon runs as root, in one sentence for a person;
 * undefined otherwise. The kernel exempts a real uid 0 from RLIMIT_NPROC (and bubblewrap run by
 * root makes no user namespace), so a sandboxed fork bomb is bounded only by the call's timeout.
 */
export function rootProcessLimitDescription(uid: number | undefined, mode: SandboxMode): string | undefined {
  if (uid !== 0 || mode === "off") return undefined;
  return (
    "running as root: sandbox.limits.processes does not bound sandboxed calls (the kernel exempts root " +
    "from the process limit), so a fork bomb in an agent's shell can stall this machine until its timeout; " +
    "run the daemon as an unprivileged user (the packaged forms do: Dockerfile USER node, agentd.service User=agentd)"
  );
}

/** Warns once at start when the daemon runs as root with the sandbox on (see above). */
export function warnRootProcessLimit(logger: Logger, mode: SandboxMode, uid = process.getuid?.()): void {
  const description = rootProcessLimitDescription(uid, mode);
  if (description !== undefined) logger.warn({ code: "SANDBOX_LIMITS_ROOT" }, description);
}
