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
 * answers that per recipient, so nodemailer resolves and the mail looks sent): a failed attempt
 * naming whom it reached and whom not. Refused only for now (4xx: greylisting, a full mailbox) →
 * retried for those addresses alone; refused for good (5xx: no such mailbox) → not retried, since
 * no retry reaches that address; the operator corrects the recipients.
 */
export function partlyRefused(host: string, accepted: string[], refused: RefusedRecipient[]): AttemptOutcome {
  const temporary = refused.every((entry) => entry.responseCode === undefined || entry.responseCode < 500);
  const refusals = refused
    .map((entry) => `${entry.recipient ?? "?"} (${(entry.response ?? entry.message).trim()})`)
    .join(", ");
  const reached = accepted.length === 0 ? "nobody" : accepted.join(", ");
  const code = refused.find((entry) => entry.responseCode !== undefined)?.responseCode;
  return {
    ok: false,
    error: `SMTP ${host}: sent to ${reached}; refused ${refusals}`,
    retryable: temporary,
    ...(code === undefined ? {} : { statusCode: code }),
    remainingRecipients: refused.flatMap((entry) => (entry.recipient === undefined ? [] : [entry.recipient])),
  };
}
