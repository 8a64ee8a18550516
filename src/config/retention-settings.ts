import { z } from "zod";
import { DEFAULT_RETENTION, type RetentionPolicy, retentionOf } from "./retention-policy.js";

/** A bound of `retention:`: a whole number of 1 or more; `null` or absent keeps the default. */
const Bound = z.number().int().min(1, "must be a whole number, 1 or more").nullable().optional();

/**
 * `retention: { days, runs_per_agent }` in config and in an agent file. A key left out (or `null`)
 * keeps the default: in config the built-in one (DEFAULT_RETENTION), in an agent file config's.
 */
export const RetentionSettingsSchema = z.strictObject({
  /** Finished runs older than this many days are pruned, with their logs and checkpoints. */
  days: Bound,
  /** Of each agent, only this many newest finished runs are kept. */
  runs_per_agent: Bound,
});
export type RetentionSettings = z.infer<typeof RetentionSettingsSchema>;

/**
 * Config `retention:`: the built-in default for a key left out or `null`. `audit_days` (config only,
 * docs/access.md) bounds the audit trail; left out, it follows `days`.
 */
export const ConfigRetentionSchema = z
  .strictObject({
    days: Bound.transform((days) => days ?? DEFAULT_RETENTION.days),
    runs_per_agent: Bound.transform((runs) => runs ?? DEFAULT_RETENTION.runsPerAgent),
    audit_days: Bound,
  })
  .transform(({ audit_days, ...rest }) => ({ ...rest, audit_days: audit_days ?? rest.days }));

/** An agent file's `retention:` as the override `retentionOf` takes: only the keys it sets. */
export function retentionOverrideOf(settings: RetentionSettings | undefined): Partial<RetentionPolicy> {
  const override: Partial<RetentionPolicy> = {};
  if (settings?.days !== undefined && settings.days !== null) override.days = settings.days;
  if (settings?.runs_per_agent !== undefined && settings.runs_per_agent !== null)
    override.runsPerAgent = settings.runs_per_agent;
  return override;
}

/** Config `retention:` over the built-in default, key by key. */
export function configuredRetention(settings: RetentionSettings | undefined): RetentionPolicy {
  return retentionOf(DEFAULT_RETENTION, retentionOverrideOf(settings));
}
