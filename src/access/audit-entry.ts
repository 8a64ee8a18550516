import { randomBytes } from "node:crypto";
import { z } from "zod";
import { ActorSchema } from "../events/actor.js";

/**
 * What the audit trail records. `memory.change` is for agent memory writes (recorded by the memory
 * feature through the same recorder).
 */
export const AUDIT_ACTIONS = [
  "run.start",
  "run.stop",
  "run.pause",
  "run.resume",
  "approval.approve",
  "approval.deny",
  "question.answer",
  "secret.set",
  "secret.remove",
  "token.create",
  "token.revoke",
  "memory.change",
  "agent.enable",
  "agent.disable",
] as const;
export type AuditAction = (typeof AUDIT_ACTIONS)[number];

/** One line of the audit trail. Never a secret value nor a token. */
export const AuditEntrySchema = z.object({
  /** Sortable: creation order; the cursor of `GET /audit?after=`. */
  id: z.string(),
  time: z.string(),
  actor: ActorSchema,
  action: z.enum(AUDIT_ACTIONS),
  /** What it acted on: ids and names only. */
  agent: z.string().optional(),
  run: z.string().optional(),
  /** The approval, question, secret, token or memory scope acted on. */
  target: z.string().optional(),
  /** Small facts: a token's role, an approval's scope. */
  details: z.record(z.string(), z.unknown()).optional(),
  /** The node of a cluster that recorded it. */
  node: z.string().optional(),
});
export type AuditEntry = z.infer<typeof AuditEntrySchema>;

/** What a caller records; the log adds `id` and `time`. */
export type AuditDraft = Omit<AuditEntry, "id" | "time">;

const RANDOM_BYTES = 6;
/** Ids whose random bytes are drawn at once: a draw per id cost each run request ~2% of its CPU. */
const IDS_PER_DRAW = 64;
let random = Buffer.alloc(0);
let offset = 0;

/**
 * An audit entry id: milliseconds (12 base-36 digits) then random characters, so ids from several
 * writers (the daemon, a CLI command, other nodes) sort by time and never collide.
 */
export function auditEntryId(now: Date): string {
  if (offset === random.length) {
    random = randomBytes(RANDOM_BYTES * IDS_PER_DRAW);
    offset = 0;
  }
  const suffix = random.toString("hex", offset, offset + RANDOM_BYTES);
  offset += RANDOM_BYTES;
  return `${now.getTime().toString(36).padStart(12, "0")}-${suffix}`;
}

/**
 * Makes the entries one log writes, stamped with the node of a cluster that wrote them. Each id
 * sorts after every id the log made before: a reader that follows the trail with
 * `GET /audit?after=` would never see an entry whose id came out below its cursor (two in one
 * millisecond drawn in the wrong order, or a clock set back). Such an entry keeps the previous
 * entry's millisecond, as its `time` too, with the next suffix.
 */
export class AuditEntryMaker {
  #lastId = "";

  make(draft: AuditDraft, now: Date, node: string | undefined): AuditEntry {
    let id = auditEntryId(now);
    let time = now;
    if (id <= this.#lastId) {
      const suffix = (Number.parseInt(this.#lastId.slice(13), 16) + 1) % 2 ** (RANDOM_BYTES * 8);
      id = `${this.#lastId.slice(0, 12)}-${suffix.toString(16).padStart(RANDOM_BYTES * 2, "0")}`;
      time = new Date(Number.parseInt(this.#lastId.slice(0, 12), 36));
    }
    this.#lastId = id;
    return {
      id,
      time: time.toISOString(),
      ...draft,
      ...(node === undefined ? {} : { node }),
    };
  }
}

/** Valid `after` cursors of `GET /audit`. */
export const AUDIT_CURSOR = /^[0-9a-z]{12}-[0-9a-f]{12}$/;

/**
 * The cursor below which every entry was made before `time`: ids start with their milliseconds, so
 * `id < auditIdBefore(time)` holds exactly for the entries older than `time`.
 */
export function auditIdBefore(time: Date): string {
  return time.getTime().toString(36).padStart(12, "0");
}
