import type { AgentHooks, ConfigHooks, HookEntry, HookPoint } from "../config/hook-settings.js";
import { HOOK_POINTS } from "../config/hook-settings.js";

/** One hook of an agent as its runs use it: config hooks first, then the agent's own. */
export interface ResolvedHook {
  point: HookPoint;
  command: string;
  /** Milliseconds before the hook's process tree is killed. */
  timeout: number;
  /** Where it was declared. */
  source: "config" | "agent";
  /** At the tool points: the tools it runs for (`*` at the end matches a prefix); absent: every tool. */
  tools?: string[];
}

/** The hooks of one agent: each point's config hooks, then the agent's, with timeouts resolved. */
export function resolveHooks(config: ConfigHooks, agent: AgentHooks | undefined): ResolvedHook[] {
  const resolved = (point: HookPoint, source: ResolvedHook["source"]) => (entry: HookEntry) => ({
    point,
    command: entry.command,
    timeout: entry.timeout ?? config.timeout,
    source,
    ...(entry.tools === undefined ? {} : { tools: entry.tools }),
  });
  return HOOK_POINTS.flatMap((point) => [
    ...config[point].map(resolved(point, "config")),
    ...(agent?.[point] ?? []).map(resolved(point, "agent")),
  ]);
}

/** Whether a hook runs for this tool (named as the agent file names it). */
export function hookAppliesTo(hook: ResolvedHook, tool: string | undefined): boolean {
  if (hook.tools === undefined || tool === undefined) return true;
  return hook.tools.some((pattern) =>
    pattern.endsWith("*") ? tool.startsWith(pattern.slice(0, -1)) : tool === pattern,
  );
}
