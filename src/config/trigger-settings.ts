import { z } from "zod";

/** The webhook body limit when config says nothing: GitHub's payloads are far smaller but for giant pushes. */
export const DEFAULT_WEBHOOK_BODY_LIMIT_BYTES = 1024 * 1024;
/** The smallest limit taken: below it a sender's ordinary ping would be refused. */
const SMALLEST_BODY_LIMIT_BYTES = 1024;
/** The largest limit taken: a body is held in memory whole while its signature is checked. */
const LARGEST_BODY_LIMIT_BYTES = 64 * 1024 * 1024;

const UNITS: Record<string, number> = { "": 1, b: 1, kb: 1_000, kib: 1_024, mb: 1_000_000, mib: 1_048_576 };

/** A size in bytes: a whole number, or a string such as `512KiB`, `2MiB`, `1500000`. */
const ByteSizeSchema = z.union([z.number(), z.string()]).transform((value, context) => {
  if (typeof value === "number") {
    if (Number.isInteger(value)) return value;
    context.addIssue({ code: "custom", message: "must be a whole number of bytes" });
    return z.NEVER;
  }
  const match = /^\s*(\d+)\s*([a-z]*)\s*$/i.exec(value);
  const unit = UNITS[(match?.[2] ?? "").toLowerCase()];
  if (match === null || unit === undefined) {
    context.addIssue({ code: "custom", message: "must be bytes, or a size such as 512KiB or 2MiB" });
    return z.NEVER;
  }
  return Number(match[1]) * unit;
});

/** Config `triggers:`: what applies to every agent's triggers. */
export const TriggersConfigSchema = z.strictObject({
  /**
   * The largest body `POST /hooks/<agent>/<name>` takes (413 past it, refused as it arrives);
   * 1 KiB to 64 MiB.
   */
  webhook_body_limit: ByteSizeSchema.default(DEFAULT_WEBHOOK_BODY_LIMIT_BYTES).pipe(
    z
      .number()
      .min(SMALLEST_BODY_LIMIT_BYTES, "must be 1KiB or more")
      .max(LARGEST_BODY_LIMIT_BYTES, "must be 64MiB or less"),
  ),
});
export type TriggersConfig = z.infer<typeof TriggersConfigSchema>;
