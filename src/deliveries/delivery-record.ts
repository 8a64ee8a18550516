import { z } from "zod";
import { DELIVERY_KINDS, DELIVERY_WHEN } from "../config/delivery-settings.js";

/** `pending` (not tried yet), `retrying` (a failed attempt, another one due), `sent`, `failed` (given up). */
export const DeliveryStatusSchema = z.enum(["pending", "retrying", "sent", "failed"]);
export type DeliveryStatus = z.infer<typeof DeliveryStatusSchema>;

const AttemptSchema = z.object({
  at: z.string(),
  ok: z.boolean(),
  /** The receiver's HTTP status, when it answered. */
  status_code: z.number().int().optional(),
  error: z.string().optional(),
});
export type DeliveryAttempt = z.infer<typeof AttemptSchema>;

/** What is sent: the text for people, and for a webhook the JSON facts of the run. */
export const DeliveryContentSchema = z.object({
  text: z.string(),
  subject: z.string().optional(),
  facts: z.record(z.string(), z.unknown()),
});
export type DeliveryContent = z.infer<typeof DeliveryContentSchema>;

/**
 * One delivery as stored and served (`GET /deliveries`): which run's outcome goes where, what is
 * sent, and every attempt. `target` keeps `{{secret:…}}` templates as written: values are read from
 * the vault at each attempt, never stored.
 */
export const DeliveryRecordSchema = z.object({
  id: z.string(),
  agent: z.string(),
  run: z.string().nullable(),
  /** The target's name (config) or `<kind>#<index>` in the agent's `deliver:`. */
  target: z.string(),
  to: z.enum(DELIVERY_KINDS),
  when: z.enum(DELIVERY_WHEN),
  status: DeliveryStatusSchema,
  content: DeliveryContentSchema,
  attempts: z.array(AttemptSchema),
  created_at: z.string(),
  updated_at: z.string(),
  next_attempt_at: z.string().optional(),
  /**
   * An email that reached some recipients: the addresses the server refused for now, the only ones
   * its next attempt goes to (so nobody receives it twice, across a restart too).
   */
  remaining_recipients: z.array(z.string()).optional(),
  /**
   * An email: the addresses the server refused for good (5xx) while others were retried. Never
   * tried again; once the others have it, the delivery ends `failed` naming them.
   */
  refused_recipients: z.array(z.string()).optional(),
  /**
   * The target as written in the agent file (`{{secret:…}}` unresolved), or nothing for a config
   * target (`shared`), read from the config at each attempt: no resolved secret is ever stored.
   * Never served.
   */
  spec: z.record(z.string(), z.unknown()),
  shared: z.boolean().optional(),
});
export type DeliveryRecord = z.infer<typeof DeliveryRecordSchema>;

/** One page of deliveries (`GET /deliveries`): newest first, ids below `before`. */
export interface DeliveryPageQuery {
  status?: DeliveryStatus | undefined;
  agent?: string | undefined;
  run?: string | undefined;
  /** The last id of the page before. */
  before?: string | undefined;
  limit: number;
}

/** A page of deliveries and the `before` of the next one (null: the last page). */
export interface DeliveryPage {
  deliveries: DeliveryRecord[];
  next: string | null;
}

/** Whether the delivery is one a page query asks for (its `before` and `limit` aside). */
export function matchesDeliveryQuery(record: DeliveryRecord, query: DeliveryPageQuery): boolean {
  return (
    (query.status === undefined || record.status === query.status) &&
    (query.agent === undefined || record.agent === query.agent) &&
    (query.run === undefined || record.run === query.run)
  );
}

/** Whether the delivery still has attempts to make. */
export function isOpenDelivery(record: DeliveryRecord): boolean {
  return record.status === "pending" || record.status === "retrying";
}

/** The record as the API serves it: without the target's settings. */
export function servedDelivery(record: DeliveryRecord): Omit<DeliveryRecord, "spec" | "shared"> {
  const { spec: _spec, shared: _shared, ...served } = record;
  return served;
}
