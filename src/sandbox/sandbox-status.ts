import type { SandboxAvailability } from "./bubblewrap.js";

/** Whether the sandbox works here, as `agentd validate --json` and the start-up summary report it. */
export type SandboxStatus =
  | { works: true; using: string; default_mode: string }
  | { works: false; reason: string; hint: string; default_mode: string };

export function sandboxStatus(availability: SandboxAvailability, defaultMode: string): SandboxStatus {
  return availability.available
    ? { works: true, using: availability.description, default_mode: defaultMode }
    : { works: false, reason: availability.reason, hint: availability.hint, default_mode: defaultMode };
}

/** One line for a person: `sandbox: works (bubblewrap (/usr/bin/bwrap)), default mode workspace-write`. */
export function describeSandboxStatus(status: SandboxStatus): string {
  if (status.works) return `sandbox: works (${status.using}), default mode ${status.default_mode}`;
  return `sandbox: NOT AVAILABLE — ${status.reason}; ${status.hint}. Sandboxed calls fail with SANDBOX_UNAVAILABLE`;
}
