import type { SandboxLimits, SandboxOverride } from "../config/sandbox-settings.js";

/** One limit an agent file asked to lift, which the config's value replaces. */
export interface IgnoredSandboxLimit {
  /** The key under `sandbox.limits`. */
  key: keyof SandboxLimits;
  /** What the file says. */
  asked: number;
  /** What applies: config's `sandbox.limits` value. */
  applies: number;
}

/**
 * The limits an agent's `sandbox.limits` asks to lift beyond config's, which mergeSandboxSettings
 * does not take: a higher `processes`, a lower `nice`. A file that an agent can write must not
 * lift what bounds its own fork bomb, so only the operator's config may.
 */
export function ignoredSandboxLimits(
  override: SandboxOverride | undefined,
  config: SandboxLimits,
): IgnoredSandboxLimit[] {
  const asked = override?.limits;
  const ignored: IgnoredSandboxLimit[] = [];
  if (asked?.processes !== undefined && asked.processes > config.processes)
    ignored.push({ key: "processes", asked: asked.processes, applies: config.processes });
  if (asked?.nice !== undefined && asked.nice < config.nice)
    ignored.push({ key: "nice", asked: asked.nice, applies: config.nice });
  return ignored;
}

/** The warning for one ignored limit, after the `file:line` it is on: what was asked, what applies, why. */
export function ignoredSandboxLimitWarning(limit: IgnoredSandboxLimit): string {
  const lifted = limit.key === "processes" ? "more processes" : "a higher CPU priority (a lower nice)";
  return (
    `sandbox.limits.${limit.key}: ${String(limit.asked)} is ignored, ${String(limit.applies)} applies ` +
    `(config sandbox.limits.${limit.key}): an agent file may only narrow its limits, not ask for ${lifted}; ` +
    "to allow it, change config.yaml"
  );
}
