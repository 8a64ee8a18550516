import { createHash, createHmac, randomBytes, timingSafeEqual } from "node:crypto";
import { Webhook } from "standardwebhooks";

/** How a webhook's sender proves it knows the trigger's secret. */
export type SignatureScheme = "github" | "standard" | "bearer";

/** The request headers verification reads (lower-cased, as Node gives them). */
export type DeliveryHeaders = Record<string, string | string[] | undefined>;

/** A key no sender knows: what an unknown agent or trigger is checked against, so it costs the same. */
const UNKNOWN_TRIGGER_KEY = randomBytes(32).toString("hex");

/** Standard Webhooks verifiers by secret: decoding a key once, not per delivery. */
const verifiers = new Map<string, Webhook>();
const MAX_VERIFIERS = 1_000;

/**
 * Whether a delivery carries a valid proof of `secret` under `scheme`; every comparison is
 * constant-time over fixed-length digests (a length never shows). `secret` undefined (an unknown
 * trigger, a secret missing from the vault) does the same work against a key nobody knows and
 * answers false, so neither the time nor the answer tells a known trigger from an unknown one.
 *
 * - `github`: `X-Hub-Signature-256: sha256=<hex>`, the HMAC-SHA256 of the raw body;
 * - `standard`: Standard Webhooks (`webhook-id`, `webhook-timestamp` within 5 minutes,
 *   `webhook-signature`), checked by the `standardwebhooks` reference library;
 * - `bearer`: `Authorization: Bearer <secret>`.
 */
export function verifyDelivery(
  scheme: SignatureScheme,
  secret: string | undefined,
  body: Buffer,
  headers: DeliveryHeaders,
): boolean {
  if (secret === undefined) {
    sameDigest(hmacHex(UNKNOWN_TRIGGER_KEY, body), signatureOf(headers["x-hub-signature-256"]));
    return false;
  }
  switch (scheme) {
    case "github": {
      return sameDigest(hmacHex(secret, body), signatureOf(headers["x-hub-signature-256"]));
    }
    case "bearer": {
      // The body's HMAC too, so a bearer trigger costs what a signed one does.
      hmacHex(UNKNOWN_TRIGGER_KEY, body);
      return sameDigest(secret, bearerOf(headers.authorization));
    }
    case "standard":
      return verifyStandard(secret, body, headers);
  }
}

/** The sender's id of this delivery, which repeats when it delivers the same event again. */
export function deliveryIdOf(scheme: SignatureScheme, headers: DeliveryHeaders): string | undefined {
  const names =
    scheme === "standard"
      ? ["webhook-id"]
      : scheme === "github"
        ? ["x-github-delivery"]
        : ["x-github-delivery", "webhook-id", "idempotency-key"];
  for (const name of names) {
    const value = single(headers[name]);
    if (value !== undefined && value !== "") return value;
  }
  return undefined;
}

/** Decodes a body as it is, failing on bytes that are not UTF-8 (a BOM kept, not eaten). */
const strictUtf8 = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });

function verifyStandard(secret: string, body: Buffer, headers: DeliveryHeaders): boolean {
  // The library signs and checks text: a Buffer it would decode with U+FFFD for each byte that is
  // not UTF-8, so a signature over one such body would verify every other body that differs from
  // it only in those bytes. Only a body whose text is exactly its bytes can verify.
  let text: string;
  try {
    text = strictUtf8.decode(body);
  } catch {
    hmacHex(UNKNOWN_TRIGGER_KEY, body);
    return false;
  }
  let verifier = verifiers.get(secret);
  if (verifier === undefined) {
    try {
      verifier = new Webhook(secret);
    } catch {
      // Not a `whsec_<base64>` key: no delivery can verify (agentd validate says so).
      hmacHex(UNKNOWN_TRIGGER_KEY, body);
      return false;
    }
    if (verifiers.size >= MAX_VERIFIERS) verifiers.clear();
    verifiers.set(secret, verifier);
  }
  try {
    verifier.verify(
      text,
      {
        "webhook-id": single(headers["webhook-id"]) ?? "",
        "webhook-timestamp": single(headers["webhook-timestamp"]) ?? "",
        "webhook-signature": single(headers["webhook-signature"]) ?? "",
      } as Record<string, string>,
      { jsonParse: false },
    );
    return true;
  } catch {
    return false;
  }
}

function hmacHex(key: string, body: Buffer): string {
  return createHmac("sha256", key).update(body).digest("hex");
}

/** Equal texts, compared in constant time through their SHA-256 digests (equal lengths always). */
function sameDigest(expected: string, given: string | undefined): boolean {
  const left = createHash("sha256").update(expected).digest();
  const right = createHash("sha256")
    .update(given ?? "\u0000missing")
    .digest();
  return timingSafeEqual(left, right) && given !== undefined;
}

function signatureOf(header: string | string[] | undefined): string | undefined {
  const value = single(header);
  if (value === undefined || !value.startsWith("sha256=")) return undefined;
  return value.slice("sha256=".length).toLowerCase();
}

function bearerOf(header: string | string[] | undefined): string | undefined {
  const value = single(header);
  const match = value === undefined ? null : /^Bearer[ ]+(\S+)\s*$/i.exec(value);
  return match?.[1];
}

function single(header: string | string[] | undefined): string | undefined {
  return Array.isArray(header) ? header[0] : header;
}
