import { z } from "zod";
import { DurationSchema } from "../util/duration.js";
import { type TriggerKind, unknownVariables, variablesOf } from "./task-template.js";

/** A trigger's name: one segment of `/hooks/<agent>/<name>`, and part of file names. */
export const TRIGGER_NAME_PATTERN = /^[a-z0-9][a-z0-9_-]{0,63}$/;
const TriggerNameSchema = z
  .string()
  .regex(
    TRIGGER_NAME_PATTERN,
    "trigger names use a-z, 0-9, _ and - (at most 64, starting with a letter or digit)",
  );

/** A webhook's secret: a vault reference only, so no secret is ever written in an agent file. */
const SECRET_REFERENCE = /^\{\{\s*secret:([A-Za-z0-9_.-]+)\s*\}\}$/;
const SecretReferenceSchema = z
  .string({ error: "a webhook trigger needs secret: {{secret:<name>}} (a secret of the vault)" })
  .regex(SECRET_REFERENCE, "secret must be a vault reference such as {{secret:github_webhook}}")
  .transform((text) => (SECRET_REFERENCE.exec(text) as RegExpExecArray)[1] as string);

/** `filter:` of a webhook: dotted payload paths and the value (or any of the values) each must have. */
const FilterValueSchema = z.union([z.string(), z.number(), z.boolean(), z.null()]);
const FilterSchema = z.record(
  z.string().regex(/^[A-Za-z0-9_-]+(?:\.[A-Za-z0-9_-]+)*$/, "filter keys are dotted payload paths"),
  z.union([FilterValueSchema, z.array(FilterValueSchema).min(1)]),
);
export type WebhookFilter = z.infer<typeof FilterSchema>;

const RateLimitSchema = z.strictObject({
  runs: z.number().int().positive(),
  per: DurationSchema.refine((milliseconds) => milliseconds >= 1_000, "per must be at least 1s"),
});

const WebhookTriggerSchema = z.strictObject({
  webhook: TriggerNameSchema,
  secret: SecretReferenceSchema,
  signature: z.enum(["github", "standard", "bearer"], {
    error: "signature must be github, standard or bearer",
  }),
  filter: FilterSchema.optional(),
  task: z.string().min(1).optional(),
  /** Runs this trigger may start per window; past it, 429 with retry-after. */
  rate_limit: RateLimitSchema.default({ runs: 60, per: 60_000 }),
});

const TERMINAL = ["completed", "failed", "stopped"] as const;
const AfterTriggerSchema = z.strictObject({
  after: z.strictObject({
    agent: z.string().regex(/^[a-z0-9_-]+$/, "agent ids use a-z, 0-9, _ and -"),
    status: z.array(z.enum(TERMINAL)).min(1).default(["completed"]),
  }),
  name: TriggerNameSchema.optional(),
  task: z.string().min(1).optional(),
});

const WatchTriggerSchema = z.strictObject({
  watch: z.strictObject({
    path: z.string().min(1),
    glob: z.string().min(1).default("**/*"),
    /** Quiet time after the last change before the run starts. */
    debounce: DurationSchema.default(2_000),
  }),
  name: TriggerNameSchema.optional(),
  task: z.string().min(1).optional(),
  /**
   * Runs this trigger may start per window; past it, the changes wait and start one run once the
   * window allows. Low by default: an agent whose runs write into the folder it watches (its own
   * file delivery, a file its model writes) starts itself again, run after run.
   */
  rate_limit: RateLimitSchema.default({ runs: 12, per: 3_600_000 }),
});

export type WebhookTriggerSettings = z.infer<typeof WebhookTriggerSchema>;
export type AfterTriggerSettings = z.infer<typeof AfterTriggerSchema>;
export type WatchTriggerSettings = z.infer<typeof WatchTriggerSchema>;
export type TriggerSettings = WebhookTriggerSettings | AfterTriggerSettings | WatchTriggerSettings;

/** The kind of a trigger as written. */
export function kindOf(trigger: TriggerSettings): TriggerKind {
  if ("webhook" in trigger) return "webhook";
  if ("after" in trigger) return "after";
  return "watch";
}

/** A trigger's name: the webhook's, the one given, or `after-<agent>` / `watch-<position>`. */
export function nameOf(trigger: TriggerSettings, index: number): string {
  if ("webhook" in trigger) return trigger.webhook;
  if (trigger.name !== undefined) return trigger.name;
  return "after" in trigger ? `after-${trigger.after.agent}` : `watch-${index + 1}`;
}

/**
 * One trigger, read by the schema of its kind (the key it has), so a webhook without a secret is
 * told just that rather than why it is not an `after` either.
 */
const TriggerSchema = z.unknown().transform((value, context): TriggerSettings => {
  const keyed = (key: string) => typeof value === "object" && value !== null && key in value;
  const schema = keyed("webhook")
    ? WebhookTriggerSchema
    : keyed("after")
      ? AfterTriggerSchema
      : keyed("watch")
        ? WatchTriggerSchema
        : undefined;
  if (schema === undefined) {
    context.addIssue({
      code: "custom",
      message:
        "each trigger is { webhook: <name>, secret, signature }, { after: { agent } } or { watch: { path } }",
    });
    return z.NEVER;
  }
  const parsed = schema.safeParse(value);
  if (parsed.success) return parsed.data;
  for (const issue of parsed.error.issues) context.addIssue({ ...issue, code: "custom", path: issue.path });
  return z.NEVER;
});

/**
 * SPEC 10: frontmatter `triggers:`, a list of `{ webhook, secret, signature, filter?, task? }`,
 * `{ after: { agent, status }, task? }` and `{ watch: { path, glob }, task? }`. A task template may
 * name only its kind's variables; names are unique within the agent.
 */
export const TriggersSchema = z.array(TriggerSchema).superRefine((triggers, context) => {
  const seen = new Set<string>();
  triggers.forEach((trigger, index) => {
    const name = nameOf(trigger, index);
    if (seen.has(name)) {
      context.addIssue({
        code: "custom",
        path: [index],
        message: `two triggers are named "${name}": give each a name of its own`,
      });
    }
    seen.add(name);
    if (trigger.task === undefined) return;
    const kind = kindOf(trigger);
    for (const unknown of unknownVariables(trigger.task, kind)) {
      context.addIssue({
        code: "custom",
        path: [index, "task"],
        message: `unknown template variable {{${unknown}}} in a ${kind} trigger's task (known: ${variablesOf(kind).join(", ")})`,
      });
    }
  });
});
