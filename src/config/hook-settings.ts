import { z } from "zod";
import { DurationSchema } from "../util/duration.js";

/** The points of a run where hooks run. */
export const HOOK_POINTS = ["before_tool", "after_tool", "on_run_end"] as const;
export type HookPoint = (typeof HOOK_POINTS)[number];

/**
 * One hook: a command line run with bash in the agent's workdir; a plain string is `{ command }`.
 * At the tool points, `tools` limits it to some tools (`shell`, `mcp:github/*`, `agent__*`).
 */
function hookEntrySchema<Extra extends z.ZodRawShape>(extra: Extra) {
  return z.union([
    z
      .string()
      .min(1)
      .transform((command) => ({ command })),
    z.strictObject({
      command: z.string().min(1),
      /** Over config `hooks.timeout`. */
      timeout: DurationSchema.optional(),
      ...extra,
    }),
  ]);
}

const ToolHookEntrySchema = hookEntrySchema({ tools: z.array(z.string().min(1)).min(1).optional() });
const RunHookEntrySchema = hookEntrySchema({});

/** One hook as written, whichever its point. */
export interface HookEntry {
  command: string;
  timeout?: number | undefined;
  tools?: string[] | undefined;
}

/** A list of hooks; a single entry may be written without the list. */
function hookListSchema<Entry extends z.ZodType<HookEntry>>(entry: Entry) {
  return z.union([entry.transform((one) => [one]), z.array(entry)]).default([]);
}

const hookLists = {
  before_tool: hookListSchema(ToolHookEntrySchema),
  after_tool: hookListSchema(ToolHookEntrySchema),
  on_run_end: hookListSchema(RunHookEntrySchema),
};

/** An agent's `hooks:`, run after the config's. */
export const AgentHooksSchema = z.strictObject(hookLists);
export type AgentHooks = z.infer<typeof AgentHooksSchema>;

/** Config `hooks:`: hooks of every agent, and the default timeout of each hook. */
export const ConfigHooksSchema = z.strictObject({
  timeout: DurationSchema.default(30_000),
  ...hookLists,
});
export type ConfigHooks = z.infer<typeof ConfigHooksSchema>;
