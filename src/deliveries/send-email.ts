import type { DeliveriesConfig } from "../config/delivery-settings.js";
import { type AttemptOutcome, permanentFailure } from "./attempt-outcome.js";
import { partlyRefused, type RefusedRecipient } from "./refused-recipients.js";

type SmtpSettings = NonNullable<DeliveriesConfig["smtp"]>;

/** How long the SMTP server gets to connect, greet and answer each command. */
const SMTP_TIMEOUT_MILLISECONDS = 30_000;

/**
 * The codes Node's TLS gives a certificate it does not trust (OpenSSL's verify results, and a name
 * that does not match the host): a configuration problem no retry fixes.
 */
const UNTRUSTED_CERTIFICATE = /CERT|SELF_SIGNED|UNABLE_TO_VERIFY|UNABLE_TO_GET_ISSUER|HOSTNAME_MISMATCH/;

/**
 * Sends one plain-text email over the configured SMTP server with nodemailer: TLS from the first
 * byte with `secure: true`, else STARTTLS — required when a user logs in (`require_tls`, so a
 * stripped STARTTLS never sends the password in clear); the user and password authenticate. The server's certificate is verified against Node's CAs (with
 * `NODE_EXTRA_CA_CERTS`); one not trusted ends the delivery, its error naming why. A 4xx reply or
 * a connection failure may be retried; a 5xx reply ends the delivery. A mail the server took for
 * some recipients only is a failed attempt (refused-recipients.ts); `remaining`, the addresses an
 * earlier attempt did not reach, makes the envelope of a retry: the headers still name everyone.
 */
export async function sendEmail(
  smtp: SmtpSettings | undefined,
  message: {
    from?: string | undefined;
    recipients: string[];
    remaining?: string[] | undefined;
    subject: string;
    text: string;
  },
  signal: AbortSignal,
): Promise<AttemptOutcome> {
  if (smtp === undefined) return permanentFailure("config deliveries.smtp is not set");
  // Loaded at the first email: a daemon that sends none does not pay for nodemailer at its start.
  const { default: nodemailer } = await import("nodemailer");
  const transport = nodemailer.createTransport({
    host: smtp.host,
    port: smtp.port ?? (smtp.secure === true ? 465 : 587),
    secure: smtp.secure ?? false,
    requireTLS: smtp.require_tls ?? smtp.user !== undefined,
    ...(smtp.user === undefined ? {} : { auth: { user: smtp.user, pass: smtp.password ?? "" } }),
    connectionTimeout: SMTP_TIMEOUT_MILLISECONDS,
    greetingTimeout: SMTP_TIMEOUT_MILLISECONDS,
    socketTimeout: SMTP_TIMEOUT_MILLISECONDS,
  });
  const from = message.from ?? smtp.user ?? "agentd@localhost";
  try {
    const sent = await transport.sendMail({
      from,
      to: message.recipients,
      ...(message.remaining === undefined ? {} : { envelope: { from, to: message.remaining } }),
      subject: message.subject,
      text: message.text,
      // A shutdown or the attempt's deadline closes the connection (`transport.close()` would not).
      signal,
    });
    const refused = (sent as { rejectedErrors?: RefusedRecipient[] }).rejectedErrors ?? [];
    if (refused.length > 0) return partlyRefused(smtp.host, sent.accepted.map(String), refused);
    return { ok: true };
  } catch (error) {
    const failure = error as Error & {
      responseCode?: number;
      code?: string;
      originalCode?: string;
      rejectedErrors?: RefusedRecipient[];
    };
    // Every recipient refused: judged per recipient, as when some took it.
    if (failure.rejectedErrors !== undefined && failure.rejectedErrors.length > 0)
      return partlyRefused(smtp.host, [], failure.rejectedErrors);
    const tlsCode = failure.originalCode ?? failure.code ?? "";
    if (UNTRUSTED_CERTIFICATE.test(tlsCode))
      return permanentFailure(
        `SMTP ${smtp.host}: the server's TLS certificate is not trusted (${failure.message}, ${tlsCode}); ` +
          "trust its CA with NODE_EXTRA_CA_CERTS",
      );
    if (failure.code === "ETLS")
      return permanentFailure(
        `SMTP ${smtp.host}: the server did not start TLS (${failure.message}); ` +
          "nothing is sent in clear while require_tls is on",
      );
    const code = failure.responseCode;
    const text = `SMTP ${smtp.host}: ${failure.message}`;
    // 5xx is the server's final word (bad recipient, refused login); the rest may pass later.
    return {
      ok: false,
      error: text,
      retryable: code === undefined || code < 500,
      ...(code ? { statusCode: code } : {}),
    };
  } finally {
    transport.close();
  }
}
