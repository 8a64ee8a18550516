import { z } from "zod";
import { AUDIT_CURSOR, AuditEntrySchema } from "../access/audit-entry.js";
import { TokenNameSchema } from "../access/api-token.js";
import { ROLES } from "../access/role.js";
import { ACTOR_KINDS } from "../events/actor.js";
import { documentedAsNumber } from "./zod-route-schema.js";

/** Most audit entries one page holds, and the default. */
export const MAX_AUDIT_LIMIT = 1_000;
export const DEFAULT_AUDIT_LIMIT = 100;

/** POST /tokens */
export const CreateTokenBodySchema = z.strictObject({
  name: TokenNameSchema,
  role: z.enum(ROLES).describe("read, run, approve or admin"),
});

/** DELETE /tokens/:name */
export const TokenParamsSchema = z.object({ name: z.string().min(1).max(64) });

/** GET /audit */
export const AuditQuerySchema = z.object({
  after: z
    .string()
    .regex(AUDIT_CURSOR, "is not a cursor GET /audit gave (pass its `next`)")
    .optional()
    .describe("the `next` of the previous page"),
  limit: documentedAsNumber(
    z
      .string()
      .regex(/^\d{1,15}$/, `must be a whole number from 1 to ${MAX_AUDIT_LIMIT}`)
      .transform(Number)
      .pipe(z.number().min(1).max(MAX_AUDIT_LIMIT, `must be at most ${MAX_AUDIT_LIMIT}`))
      .default(DEFAULT_AUDIT_LIMIT),
    { type: "integer", minimum: 1, maximum: MAX_AUDIT_LIMIT, default: DEFAULT_AUDIT_LIMIT },
  ),
});

const ActorResponseSchema = z.looseObject({ kind: z.enum(ACTOR_KINDS), name: z.string() });

export const TokenSummarySchema = z.looseObject({
  name: z.string(),
  role: z.enum(ROLES),
  created_at: z.string(),
  created_by: z.string().optional(),
});

export const TokenListSchema = z.looseObject({
  tokens: z.array(TokenSummarySchema),
  /** The daemon's own token (server.token or <data_dir>/api.token): admin, never listed by value. */
  default: z.looseObject({ name: z.string(), role: z.literal("admin") }),
});

export const CreatedTokenSchema = TokenSummarySchema.extend({
  token: z.string().describe("the token: shown this once, never stored"),
});

export const RevokedTokenSchema = z.looseObject({ revoked: z.string() });

/** An audit entry as the log keeps it, open to fields a later version adds. */
export const AuditEntryResponseSchema = AuditEntrySchema.extend({ actor: ActorResponseSchema }).loose();

export const AuditPageSchema = z.looseObject({
  entries: z.array(AuditEntryResponseSchema),
  next: z.string().nullable().describe("pass as `after` for the next page; null: nothing newer yet"),
});

export const SessionSchema = z.looseObject({
  role: z.enum(ROLES),
  actor: ActorResponseSchema,
  /** false with `server.auth: none`. */
  authenticated: z.boolean(),
});
