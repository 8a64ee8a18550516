import { z } from "zod";

/** The kinds of actor an audited action can have. */
export const ACTOR_KINDS = ["token", "cli", "dashboard", "schedule", "trigger", "system"] as const;

/**
 * Who did something: a named API token, a local `agentd` command, a browser session of the
 * dashboard (named after the token it logged in with), the scheduler, a trigger, or the daemon
 * itself. Recorded in the events of audited actions and in the audit log.
 */
export const ActorSchema = z.strictObject({
  kind: z.enum(ACTOR_KINDS),
  name: z.string().min(1).max(200),
});
export type Actor = z.infer<typeof ActorSchema>;
