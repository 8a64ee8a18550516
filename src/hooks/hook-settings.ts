import { z } from "zod";
import { DurationSchema } from "../util/duration.js";

/** The points of a run where hooks run. */
export const HOOK_POINTS = ["before_tool", "after_tool", "on_run_end"] as const;
export type HookPoint = (typeof HOOK_POINTS)[number];

/** One hook: a command line run with bash in the agent's workdir; a plain string is `{ command }`. */
const HookEntrySchema = z.union([
  z
    .string()
    .min(1)
    .transform((command) => ({ command, timeout: undefined })),
  z.strictObject({
    command: z.string().min(1),
    /** Over config `hooks.timeout`. */
    timeout: DurationSchema.optional(),
  }),
]);
export type HookEntry = z.infer<typeof HookEntrySchema>;

/** A list of hooks; a single entry may be written without the list. */
const HookListSchema = z
  .union([HookEntrySchema.transform((entry) => [entry]), z.array(HookEntrySchema)])
  .default([]);

const hookLists = {
  before_tool: HookListSchema,
  after_tool: HookListSchema,
  on_run_end: HookListSchema,
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
