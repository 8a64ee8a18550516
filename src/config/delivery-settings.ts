import { z } from "zod";

/** When a target is sent to (SPEC 10): every end, a failure, a changed result, a wait, the agent's call. */
export const DELIVERY_WHEN = ["always", "failure", "changed", "waiting", "agent"] as const;
export type DeliveryWhen = (typeof DELIVERY_WHEN)[number];

/** The kinds of target a delivery goes to. */
export const DELIVERY_KINDS = ["webhook", "slack", "discord", "telegram", "email", "file"] as const;
export type DeliveryKind = (typeof DELIVERY_KINDS)[number];

/**
 * The variables a delivery `template` may use (`{{agent}}`): anything else is a validation error,
 * so a typo never sends a message with a hole in it, and no template reaches a secret.
 */
export const DELIVERY_TEMPLATE_VARIABLES = [
  "agent",
  "run",
  "status",
  "reason",
  "when",
  "duration",
  "cost",
  "result",
  "error",
  "task",
  "link",
  "message",
  "waiting_for",
] as const;
export type DeliveryTemplateVariable = (typeof DELIVERY_TEMPLATE_VARIABLES)[number];

/** `{{ name }}` in a delivery template. */
export const DELIVERY_TEMPLATE_PLACE = /\{\{\s*([^{}]*?)\s*\}\}/g;

/** The names a template uses that are not delivery variables, each once. */
export function unknownTemplateVariables(template: string): string[] {
  const known = new Set<string>(DELIVERY_TEMPLATE_VARIABLES);
  const unknown = new Set<string>();
  for (const match of template.matchAll(DELIVERY_TEMPLATE_PLACE)) {
    const name = match[1] as string;
    if (!known.has(name)) unknown.add(name);
  }
  return [...unknown];
}

const TemplateSchema = z
  .string()
  .min(1)
  .max(20_000)
  .superRefine((template, context) => {
    for (const name of unknownTemplateVariables(template)) {
      context.addIssue({
        code: "custom",
        message: `unknown template variable "{{${name}}}"; use ${DELIVERY_TEMPLATE_VARIABLES.join(", ")}`,
      });
    }
  });

const WhenSchema = z
  .union([z.enum(DELIVERY_WHEN), z.array(z.enum(DELIVERY_WHEN)).min(1)])
  .transform((when) => [...new Set(Array.isArray(when) ? when : [when])])
  .default(["always"]);

const HttpUrlSchema = z
  .string()
  .min(1)
  .superRefine((url, context) => {
    // A `{{secret:…}}` URL is resolved when sent; only its scheme can be checked now.
    if (/^\s*\{\{\s*secret:/.test(url)) return;
    let parsed: URL;
    try {
      parsed = new URL(url);
    } catch {
      context.addIssue({ code: "custom", message: `"${url}" is not a URL` });
      return;
    }
    if (parsed.protocol !== "https:" && parsed.protocol !== "http:") {
      context.addIssue({ code: "custom", message: "the URL must be http: or https:" });
    }
  });

const common = { when: WhenSchema, template: TemplateSchema.optional() };

/** One delivery target (SPEC 10), by its `to:` kind. Credentials may be `{{secret:name}}`. */
export const DeliveryTargetSchema = z.discriminatedUnion("to", [
  z.strictObject({ to: z.literal("webhook"), url: HttpUrlSchema, secret: z.string().min(1), ...common }),
  z.strictObject({ to: z.literal("slack"), url: HttpUrlSchema, ...common }),
  z.strictObject({ to: z.literal("discord"), url: HttpUrlSchema, ...common }),
  z.strictObject({
    to: z.literal("telegram"),
    token: z.string().min(1),
    chat_id: z.union([z.string().min(1), z.number().int()]).transform(String),
    /** Default `https://api.telegram.org`. */
    api_url: HttpUrlSchema.optional(),
    ...common,
  }),
  z.strictObject({
    to: z.literal("email"),
    recipients: z.array(z.string().min(3)).min(1),
    from: z.string().min(3).optional(),
    subject: TemplateSchema.optional(),
    ...common,
  }),
  z.strictObject({ to: z.literal("file"), path: z.string().min(1), ...common }),
]);
export type DeliveryTarget = z.infer<typeof DeliveryTargetSchema>;

const TARGET_NAME = /^[A-Za-z0-9_.-]+$/;

/** One entry of an agent's `deliver:`: a target, or the name of one in config `deliveries.targets`. */
export const DeliverEntrySchema = z.union([
  z.string().regex(TARGET_NAME, "a target name uses letters, digits, _ . -"),
  DeliveryTargetSchema,
]);
export type DeliverEntry = z.infer<typeof DeliverEntrySchema>;

/** Frontmatter `deliver:`: a list of targets (one entry may be written without the list). */
export const DeliverListSchema = z
  .union([DeliverEntrySchema.transform((entry) => [entry]), z.array(DeliverEntrySchema)])
  .default([]);

/** Config `deliveries:`: shared targets by name, the SMTP server email targets use, the dashboard's URL. */
export const DeliveriesConfigSchema = z.strictObject({
  targets: z
    .record(z.string().regex(TARGET_NAME, "a target name uses letters, digits, _ . -"), DeliveryTargetSchema)
    .default({}),
  smtp: z
    .strictObject({
      host: z.string().min(1),
      /** Default 587 (465 with `secure: true`). */
      port: z.number().int().min(1).max(65_535).optional(),
      /** true: TLS from the first byte (port 465); false (default): STARTTLS when the server offers it. */
      secure: z.boolean().optional(),
      /**
       * With `secure: false`: refuse to go on unless the server offers STARTTLS, so no login crosses
       * the network in clear. Default true when a `user` is set, else false.
       */
      require_tls: z.boolean().optional(),
      user: z.string().min(1).optional(),
      password: z.string().min(1).optional(),
    })
    .optional(),
  /** The dashboard as recipients reach it (behind a proxy); default the daemon's own URL. */
  dashboard_url: HttpUrlSchema.optional(),
});
export type DeliveriesConfig = z.infer<typeof DeliveriesConfigSchema>;

/** One problem of an agent's `deliver:` against the config: where (index) and what. */
export interface DeliveryReferenceProblem {
  index: number;
  message: string;
  hint: string;
}

/** Names the config does not define, and email targets without `deliveries.smtp`. */
export function deliveryReferenceProblems(
  deliver: readonly DeliverEntry[],
  deliveries: DeliveriesConfig,
): DeliveryReferenceProblem[] {
  const problems: DeliveryReferenceProblem[] = [];
  deliver.forEach((entry, index) => {
    const target = typeof entry === "string" ? deliveries.targets[entry] : entry;
    if (target === undefined) {
      const names = Object.keys(deliveries.targets);
      problems.push({
        index,
        message: `unknown delivery target "${String(entry)}"`,
        hint: names.length > 0 ? `use one of ${names.join(", ")}` : `define it in config deliveries.targets`,
      });
    } else if (target.to === "email" && deliveries.smtp === undefined) {
      problems.push({
        index,
        message: "an email target needs config deliveries.smtp",
        hint: "set deliveries.smtp: { host, port, secure, user, password } in config.yaml",
      });
    }
  });
  return problems;
}

/** Whether any of an agent's targets has `when: agent`: the `notify` tool is then offered to it. */
export function declaresNotify(deliver: readonly DeliverEntry[], deliveries: DeliveriesConfig): boolean {
  return deliver.some((entry) =>
    (typeof entry === "string" ? deliveries.targets[entry] : entry)?.when.includes("agent"),
  );
}
