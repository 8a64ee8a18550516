import { DELIVERY_TEMPLATE_PLACE, type DeliveryKind } from "../config/delivery-settings.js";
import { type DeliveryFacts, formatCost, formatElapsed, templateValues } from "./delivery-facts.js";

/** Characters of text each kind takes at most (Discord 2,000 and Telegram 4,096 are their APIs' limits). */
const MAX_TEXT: Record<DeliveryKind, number> = {
  webhook: 100_000,
  slack: 3_000,
  discord: 1_900,
  telegram: 4_000,
  email: 100_000,
  file: 100_000,
};

/**
 * The message for a target: its `template` with the variables filled in (values made safe for
 * that kind's markup), or the kind's default: a headline (agent, status, duration, cost), the
 * result or the message, and the dashboard link. Cut to what the kind accepts.
 */
export function deliveryText(kind: DeliveryKind, facts: DeliveryFacts, template?: string): string {
  const text = template === undefined ? defaultText(kind, facts) : fillTemplate(template, facts, kind);
  return cut(text, MAX_TEXT[kind]);
}

/** The email subject: a template, or `[agentd] <agent> <status>`. */
export function deliverySubject(facts: DeliveryFacts, template?: string): string {
  const subject =
    template === undefined ? `[agentd] ${headline(facts)}` : fillTemplate(template, facts, "email");
  // A header: one line.
  return cut(subject.replace(/[\r\n]+/g, " "), 250);
}

/** `{{name}}` replaced by the variable (escaped for the kind); names were checked at load. */
export function fillTemplate(template: string, facts: DeliveryFacts, kind: DeliveryKind): string {
  const values = templateValues(facts);
  return template.replace(DELIVERY_TEMPLATE_PLACE, (_place, name: string) =>
    escapeFor(kind, values[name] ?? ""),
  );
}

function defaultText(kind: DeliveryKind, facts: DeliveryFacts): string {
  const body = escapeFor(kind, facts.message ?? facts.result ?? facts.error ?? facts.waiting_for ?? "");
  const link = facts.link;
  switch (kind) {
    case "slack":
      return [
        `*${escapeFor(kind, headline(facts))}*`,
        body,
        link ? `<${link}|Open the run in the dashboard>` : "",
      ]
        .filter(Boolean)
        .join("\n");
    case "discord":
      return [`**${escapeFor(kind, headline(facts))}**`, body, link ? `Run: <${link}>` : ""]
        .filter(Boolean)
        .join("\n");
    default:
      return [headline(facts), body, link ? `Run: ${link}` : ""].filter(Boolean).join("\n\n");
  }
}

/** `nightly-digest completed in 12s ($0.0031)`, `monitor waits for an approval`, `monitor says`. */
function headline(facts: DeliveryFacts): string {
  if (facts.when === "agent") return `${facts.agent} says`;
  if (facts.when === "waiting")
    return `${facts.agent} is waiting for ${facts.waiting_for?.startsWith("approval") ? "an approval" : "an answer"}`;
  const parts = [`${facts.agent} ${facts.status}${facts.reason ? ` (${facts.reason})` : ""}`];
  if (facts.duration_ms !== undefined) parts.push(`in ${formatElapsed(facts.duration_ms)}`);
  if (facts.cost_usd !== undefined) parts.push(`(${formatCost(facts.cost_usd)})`);
  return parts.join(" ");
}

/**
 * Text the agent wrote, made inert for the kind's markup: Slack's `<!channel>`, `<@U1>` and links
 * need `<`, `>` and `&`; Discord's mentions are also switched off in the request.
 */
function escapeFor(kind: DeliveryKind, text: string): string {
  if (kind === "slack") return text.replaceAll("&", "&amp;").replaceAll("<", "&lt;").replaceAll(">", "&gt;");
  return text;
}

function cut(text: string, limit: number): string {
  return text.length <= limit ? text : `${text.slice(0, limit - 1)}…`;
}
