import { hash, randomBytes } from "node:crypto";
import { z } from "zod";
import { ROLES } from "./role.js";

/** The name of the token of `server.token` / `<data_dir>/api.token`: always valid, always admin. */
export const DEFAULT_TOKEN_NAME = "default";

/** The actor's name of every request when `server.auth: none` (no token at all). */
export const ANONYMOUS_NAME = "anonymous";

/**
 * A token's name: 1–64 of a-z, 0-9, `-`, `_`, `.`, starting with a letter or a digit; neither
 * `default`, `anonymous` nor a role's name.
 */
export const TokenNameSchema = z
  .string()
  .regex(
    /^[a-z0-9][a-z0-9._-]{0,63}$/,
    "must be 1-64 of a-z, 0-9, '.', '_', '-', starting with a letter or digit",
  )
  .refine((name) => name !== DEFAULT_TOKEN_NAME, `"${DEFAULT_TOKEN_NAME}" names the daemon's own token`)
  // The audit trail's name of a request without a token (auth: none): a token under it would pass
  // for one.
  .refine(
    (name) => name !== ANONYMOUS_NAME,
    `"${ANONYMOUS_NAME}" names a request without a token (server.auth: none)`,
  )
  // A read token named "admin" would read as an admin in the audit trail and in every refusal.
  .refine(
    (name) => !(ROLES as readonly string[]).includes(name),
    `a role's name (${ROLES.join(", ")}) would pass for the token's role: name the token after its holder`,
  );

/** Named tokens begin with it, so a leaked one is easy to recognise (and to scan for). */
export const TOKEN_PREFIX = "agentd_";

/**
 * One named token as stored: never the token itself, only its SHA-256 (a token is 256 random bits,
 * so a plain hash cannot be reversed by guessing).
 */
export const TokenRecordSchema = z.object({
  name: z.string().min(1),
  role: z.enum(ROLES),
  /** base64url SHA-256 of the token. */
  hash: z.string().min(1),
  created_at: z.string(),
  /** Who created it (the actor's kind and name, e.g. `token:default`). */
  created_by: z.string().optional(),
});
export type TokenRecord = z.infer<typeof TokenRecordSchema>;

/** What `GET /tokens` and `agentd token list` show of a token (no hash). */
export type TokenSummary = Omit<TokenRecord, "hash">;

/** A new token: the prefix and 256 random bits. */
export function generateToken(): string {
  return `${TOKEN_PREFIX}${randomBytes(32).toString("base64url")}`;
}

/** The digest a token is stored and looked up by. */
export function tokenDigest(token: string): string {
  return hash("sha256", token, "base64url");
}

/** The same digest as bytes, for a constant-time comparison without a base64url round trip. */
export function tokenDigestBytes(token: string): Buffer {
  return hash("sha256", token, "buffer") as unknown as Buffer;
}

/** A record without its hash. */
export function summaryOf(record: TokenRecord): TokenSummary {
  const { hash: _hash, ...summary } = record;
  return summary;
}
