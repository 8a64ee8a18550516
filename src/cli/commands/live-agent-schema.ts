import { z } from "zod";

/** One agent of `GET /agents`, as the client reads it. */
const LiveAgentSchema = z.object({
  id: z.string(),
  name: z.string(),
  description: z.string(),
  valid: z.boolean(),
  errors: z.array(z.string()),
  worker: z.string(),
  schedule: z.object({ cron: z.string(), timezone: z.string().nullable() }).nullable(),
  next_fire: z.string().nullable(),
  enabled: z.boolean(),
  switched_off: z.object({ by: z.string(), at: z.string() }).nullable().optional(),
  last_run: z.object({ id: z.string(), status: z.string(), reason: z.string().nullable() }).nullable(),
});
export type LiveAgent = z.infer<typeof LiveAgentSchema>;

export const LiveAgentListSchema = z.object({
  agents: z.array(LiveAgentSchema),
  agents_dir: z.string().optional(),
});
