import { AgentdError } from "../errors/agentd-error.js";
import { SECCOMP_ARCHITECTURES, seccompProgram } from "./seccomp-filter.js";

/** Why sandboxed children cannot run here without `sandbox.unix_sockets`, and what to do. */
export interface SeccompShortfall {
  reason: string;
  hint: string;
}

/**
 * Undefined when this machine has the seccomp filter (or config lists unix sockets, which turns it
 * off), else what is missing: agentd knows the filter for x86_64 and aarch64 only, and never runs
 * a sandboxed child without it silently.
 */
export function seccompShortfall(
  unixSockets: readonly string[],
  architecture: string = process.arch,
): SeccompShortfall | undefined {
  if (unixSockets.length > 0 || seccompProgram(architecture) !== undefined) return undefined;
  return {
    reason:
      `the sandbox's seccomp filter, which keeps sandboxed processes away from the host's unix sockets ` +
      `(D-Bus, ssh-agent, docker…), exists for ${SECCOMP_ARCHITECTURES.join(" and ")} only, and this machine is ${architecture}`,
    hint:
      "run agentd on x86_64 or aarch64; or list the host sockets sandboxed processes may reach in config " +
      "sandbox.unix_sockets, which runs them without the filter (the usual socket places stay hidden); " +
      "or set sandbox: off, knowing the agent can then read every secret the daemon can",
  };
}

/** The filter's bytes for this machine, or SANDBOX_UNAVAILABLE saying what to do. */
export function requireSeccompProgram(owner: string, architecture: string = process.arch): Buffer {
  const program = seccompProgram(architecture);
  if (program !== undefined) return program;
  const shortfall = seccompShortfall([], architecture) as SeccompShortfall;
  throw new AgentdError("SANDBOX_UNAVAILABLE", `cannot sandbox ${owner}: ${shortfall.reason}`, {
    hint: shortfall.hint,
  });
}
