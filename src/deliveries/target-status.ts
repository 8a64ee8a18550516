import type { DeliveriesConfig, DeliveryTarget, DeliveryWhen } from "../config/delivery-settings.js";
import type { AgentDefinition } from "../definitions/agent-definition.js";
import { type DeliveryRecord, type DeliveryStatus, isOpenDelivery } from "./delivery-record.js";
import { targetsOf } from "./delivery-targets.js";

/**
 * A target's health from its deliveries: `failing` (its latest finished deliveries failed),
 * `retrying` (its latest delivery failed an attempt and waits for the next), `ok` (its latest
 * finished delivery was sent), `untried` (nothing finished yet).
 */
export type TargetHealth = "ok" | "retrying" | "failing" | "untried";

/** One configured target as `GET /deliveries/targets` serves it: where it goes, never a credential. */
export interface TargetStatus {
  /** The agent whose `deliver:` names it; null: a config target no agent names. */
  agent: string | null;
  /** The config name, or `<kind>#<index>` in the agent's `deliver:` (as deliveries name it). */
  target: string;
  to: DeliveryTarget["to"];
  when: DeliveryWhen[];
  /** A config `deliveries.targets` entry. */
  shared: boolean;
  /** Where it goes with its credentials left out: a URL's origin, a chat, the recipients, a path. */
  destination: string;
  health: TargetHealth;
  /** The status of its newest delivery; null: none kept. */
  last_status: DeliveryStatus | null;
  /** When its newest delivery last changed. */
  last_at: string | null;
  /** The last error of its newest delivery that is not sent. */
  last_error: string | null;
  /** Its newest finished deliveries that failed, in a row (0: the latest finished was sent). */
  failing_streak: number;
}

/**
 * Every target of the agents (and each config target no agent names) with its health from the
 * deliveries kept, newest first. `mask` takes out any secret the text could still hold.
 */
export function targetStatuses(
  definitions: readonly AgentDefinition[],
  config: DeliveriesConfig,
  deliveries: readonly DeliveryRecord[],
  mask: (text: string) => string,
): TargetStatus[] {
  const byTarget = new Map<string, DeliveryRecord[]>();
  for (const record of deliveries) {
    const key = `${record.agent}/${record.target}`;
    const list = byTarget.get(key);
    if (list === undefined) byTarget.set(key, [record]);
    else list.push(record);
  }
  const named = new Set<string>();
  const statuses: TargetStatus[] = definitions.flatMap((definition) =>
    targetsOf(definition.frontmatter.deliver, config).map(({ name, target, shared }) => {
      if (shared) named.add(name);
      const records = byTarget.get(`${definition.id}/${name}`) ?? [];
      return { agent: definition.id, ...describe(name, target, shared, mask), ...healthOf(records, mask) };
    }),
  );
  for (const [name, target] of Object.entries(config.targets)) {
    if (!named.has(name))
      statuses.push({ agent: null, ...describe(name, target, true, mask), ...healthOf([], mask) });
  }
  return statuses;
}

function describe(
  name: string,
  target: DeliveryTarget,
  shared: boolean,
  mask: (text: string) => string,
): Pick<TargetStatus, "target" | "to" | "when" | "shared" | "destination"> {
  return { target: name, to: target.to, when: target.when, shared, destination: mask(destinationOf(target)) };
}

/**
 * Where a target goes, without what could be a credential: a URL's scheme and host only (a Slack
 * or Discord webhook's path is its secret, a webhook's path or query may hold a token), a vault
 * reference as written (the name of a secret, not its value), Telegram's chat and API host (never
 * the bot token), email recipients, a file's path in the workdir.
 */
export function destinationOf(target: DeliveryTarget): string {
  switch (target.to) {
    case "webhook":
    case "slack":
    case "discord":
      return originOf(target.url);
    case "telegram":
      return `chat ${target.chat_id} via ${originOf(target.api_url ?? "https://api.telegram.org")}`;
    case "email":
      return target.recipients.join(", ");
    case "file":
      return target.path;
  }
}

function originOf(url: string): string {
  const reference = /^\s*(\{\{\s*secret:[^{}]*\}\})/.exec(url);
  if (reference !== null) return reference[1] as string;
  try {
    const parsed = new URL(url);
    const rest = parsed.pathname !== "/" || parsed.search !== "" ? "/…" : "";
    return `${parsed.protocol}//${parsed.host}${rest}`;
  } catch {
    return "(not a URL)";
  }
}

function healthOf(
  records: readonly DeliveryRecord[],
  mask: (text: string) => string,
): Pick<TargetStatus, "health" | "last_status" | "last_at" | "last_error" | "failing_streak"> {
  const newest = records[0];
  let failingStreak = 0;
  let sentEver = false;
  for (const record of records) {
    if (isOpenDelivery(record)) continue;
    if (record.status === "sent") {
      sentEver = true;
      break;
    }
    failingStreak++;
  }
  const lastError =
    newest === undefined || newest.status === "sent"
      ? undefined
      : [...newest.attempts].reverse().find((attempt) => attempt.error !== undefined)?.error;
  const health: TargetHealth =
    failingStreak > 0 ? "failing" : newest?.status === "retrying" ? "retrying" : sentEver ? "ok" : "untried";
  return {
    health,
    last_status: newest?.status ?? null,
    last_at: newest?.updated_at ?? null,
    last_error: lastError === undefined ? null : mask(lastError),
    failing_streak: failingStreak,
  };
}
