import type { AgentHooks, ConfigHooks, HookPoint } from "./hook-settings.js";
import { HOOK_POINTS } from "./hook-settings.js";

/** One hook of an agent as its runs use it: config hooks first, then the agent's own. */
export interface ResolvedHook {
  point: HookPoint;
  command: string;
  /** Milliseconds before the hook's process tree is killed. */
  timeout: number;
  /** Where it was declared. */
  source: "config" | "agent";
}

/** The hooks of one agent: each point's config hooks, then the agent's, with timeouts resolved. */
export function resolveHooks(config: ConfigHooks, agent: AgentHooks | undefined): ResolvedHook[] {
  return HOOK_POINTS.flatMap((point) => [
    ...config[point].map((entry) => ({
      point,
      command: entry.command,
      timeout: entry.timeout ?? config.timeout,
      source: "config" as const,
    })),
    ...(agent?.[point] ?? []).map((entry) => ({
      point,
      command: entry.command,
      timeout: entry.timeout ?? config.timeout,
      source: "agent" as const,
    })),
  ]);
}
