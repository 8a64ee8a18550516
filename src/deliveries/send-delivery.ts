import { Webhook } from "standardwebhooks";
import type { DeliveriesConfig, DeliveryTarget } from "../config/delivery-settings.js";
import type { SandboxPolicy } from "../sandbox/sandbox-policy.js";
import type { AttemptOutcome } from "./attempt-outcome.js";
import { permanentFailure } from "./attempt-outcome.js";
import type { DeliveryContent } from "./delivery-record.js";
import { postJson } from "./post-json.js";
import { sendEmail } from "./send-email.js";
import { writeDeliveryFile } from "./write-delivery-file.js";

const TELEGRAM_API = "https://api.telegram.org";

/** What one attempt needs besides the target: the delivery's id, the time, SMTP, the agent's workdir. */
export interface SendContext {
  /** The delivery's id: a webhook's `webhook-id`, the same at every attempt (receivers de-duplicate by it). */
  id: string;
  /** When this attempt is made: a webhook's `webhook-timestamp`, which its signature covers. */
  now: number;
  /** When the delivery was made (the run's end, its wait, its notification): a webhook body's `timestamp`. */
  madeAt: number;
  smtp: DeliveriesConfig["smtp"];
  /** The agent's workdir and sandbox (file targets); undefined when the agent is gone. */
  place: { workdir: string; sandbox: SandboxPolicy } | undefined;
  /** An email's addresses an earlier attempt did not reach yet (undefined: every recipient). */
  remainingRecipients?: string[] | undefined;
  signal: AbortSignal;
}

/** One attempt to deliver `content` to a target whose secrets are resolved. */
export async function sendDelivery(
  target: DeliveryTarget,
  content: DeliveryContent,
  context: SendContext,
): Promise<AttemptOutcome> {
  switch (target.to) {
    case "webhook":
      return sendWebhook(target.url, target.secret, content, context);
    case "slack":
      // Slack's incoming webhook: `text` in mrkdwn.
      return postJson(target.url, JSON.stringify({ text: content.text }), {}, context.signal);
    case "discord":
      // Discord's execute-webhook: `content`, with every mention switched off (@everyone in a result).
      return postJson(
        target.url,
        JSON.stringify({ content: content.text, allowed_mentions: { parse: [] } }),
        {},
        context.signal,
      );
    case "telegram": {
      const base = (target.api_url ?? TELEGRAM_API).replace(/\/+$/, "");
      const body = { chat_id: target.chat_id, text: content.text, disable_web_page_preview: true };
      return postJson(`${base}/bot${target.token}/sendMessage`, JSON.stringify(body), {}, context.signal);
    }
    case "email":
      return sendEmail(
        context.smtp,
        {
          from: target.from,
          recipients: target.recipients,
          remaining: context.remainingRecipients,
          subject: content.subject ?? "",
          text: content.text,
        },
        context.signal,
      );
    case "file":
      return writeDeliveryFile(context.place, target.path, content.text);
  }
}

/**
 * A generic webhook, signed the Standard Webhooks way: `webhook-id` (the delivery's id),
 * `webhook-timestamp` (seconds) and `webhook-signature` (`v1,` + HMAC-SHA256 of
 * `id.timestamp.body`, base64, with the `whsec_…` secret), so a receiver verifies it with the
 * reference libraries. The body is `{ type, timestamp, data }`.
 */
async function sendWebhook(
  url: string,
  secret: string,
  content: DeliveryContent,
  context: SendContext,
): Promise<AttemptOutcome> {
  let signer: Webhook;
  try {
    signer = new Webhook(secret);
  } catch (error) {
    return permanentFailure(
      `the webhook secret is not usable: ${error instanceof Error ? error.message : String(error)}`,
    );
  }
  // The event's time, the same at every attempt (Standard Webhooks: when it occurred), so a retry
  // carries the very body the first attempt did; the signed header time is the attempt's own.
  const body = JSON.stringify({
    type: eventTypeOf(content),
    timestamp: new Date(context.madeAt).toISOString(),
    data: { ...content.facts, text: content.text },
  });
  const headers = {
    "webhook-id": context.id,
    "webhook-timestamp": String(Math.floor(context.now / 1_000)),
    "webhook-signature": signer.sign(context.id, new Date(context.now), body),
  };
  return postJson(url, body, headers, context.signal);
}

/** `run.completed`, `run.failed`, `run.stopped`, `run.waiting`, `agent.notify`. */
function eventTypeOf(content: DeliveryContent): string {
  const { when, status } = content.facts;
  if (when === "agent") return "agent.notify";
  if (when === "waiting") return "run.waiting";
  return `run.${String(status)}`;
}
