import type { AttemptOutcome } from "./attempt-outcome.js";

/** A recipient the SMTP server refused at `RCPT TO` (nodemailer's `rejectedErrors`). */
export interface RefusedRecipient {
  recipient?: string;
  responseCode?: number;
  response?: string;
  message: string;
}

/**
 * The outcome of an email the server took for some recipients and refused for the others (it
 * answers that per recipient, so nodemailer resolves and the mail looks sent), or refused for all
 * (nodemailer throws with the same list): a failed attempt naming whom it reached and whom not.
 * Refused for now (4xx: greylisting, a full mailbox) → retried for those addresses alone. Refused
 * for good (5xx: no such mailbox) → never tried again, since no retry reaches that address: with
 * none refused for now the delivery ends here; else those addresses are `refusedForGood`, and the
 * delivery goes on for the others and ends failed naming them (the operator corrects them).
 */
export function partlyRefused(host: string, accepted: string[], refused: RefusedRecipient[]): AttemptOutcome {
  const forNow = refused.filter((entry) => entry.responseCode === undefined || entry.responseCode < 500);
  const forGood = refused.filter((entry) => !forNow.includes(entry));
  const refusals = refused
    .map((entry) => `${entry.recipient ?? "?"} (${(entry.response ?? entry.message).trim()})`)
    .join(", ");
  const reached = accepted.length === 0 ? "nobody" : accepted.join(", ");
  const code = refused.find((entry) => entry.responseCode !== undefined)?.responseCode;
  const mixed = forNow.length > 0 && forGood.length > 0;
  return {
    ok: false,
    error:
      `SMTP ${host}: sent to ${reached}; refused ${refusals}` +
      (mixed
        ? `; retried for ${addressesOf(forNow).join(", ")} alone, ${addressesOf(forGood).join(", ")} refused for good`
        : ""),
    retryable: forNow.length > 0,
    ...(code === undefined ? {} : { statusCode: code }),
    remainingRecipients: addressesOf(forNow.length > 0 ? forNow : refused),
    ...(mixed ? { refusedForGood: addressesOf(forGood) } : {}),
  };
}

function addressesOf(refused: RefusedRecipient[]): string[] {
  return refused.flatMap((entry) => (entry.recipient === undefined ? [] : [entry.recipient]));
}
