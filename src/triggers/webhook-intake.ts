import { createHash } from "node:crypto";
import type { Clock } from "../clock/clock.js";
import type { AgentDefinition } from "../definitions/agent-definition.js";
import { AgentdError } from "../errors/agentd-error.js";
import type { Logger } from "../logging/logger.js";
import type { RunRecord } from "../run-vocabulary/run-record.js";
import type { SandboxPolicy } from "../sandbox/sandbox-policy.js";
import type { TriggerRateLimit } from "./delivery-rate-limit.js";
import type { TriggerHealth, TriggerOutcome } from "./trigger-health.js";
import { matchesFilter } from "./payload-filter.js";
import { writePayloadFile } from "./payload-file.js";
import { renderTaskTemplate, valueAt } from "./task-template.js";
import type { TriggerRuns } from "./trigger-runs.js";
import type { TriggerSecrets } from "./trigger-secrets.js";
import type { ArmedTrigger, TriggerSet } from "./trigger-set.js";
import type { WebhookTriggerSettings } from "./trigger-schema.js";
import { type DeliveryHeaders, deliveryIdOf, verifyDelivery } from "./webhook-signature.js";

/** One `POST /hooks/<agent>/<name>` as the route hands it over: the raw bytes the signature covers. */
export interface HookDelivery {
  agent: string;
  name: string;
  headers: DeliveryHeaders;
  body: Buffer;
}

/** What the route answers. */
export type HookAnswer =
  | { status: 202; body: { run: string; status: RunRecord["status"] } }
  | { status: 200; body: { run: string; status: RunRecord["status"]; duplicate: true } }
  | { status: 200; body: { skipped: true; reason: "filter" } }
  | {
      status: 429;
      retryAfterSeconds: number;
      body: { error: { code: "RATE_LIMITED"; message: string; hint: string } };
    };

export interface WebhookIntakeOptions {
  triggers: () => TriggerSet;
  secrets: TriggerSecrets;
  runs: TriggerRuns;
  /** Where starts are counted: this daemon, or the cluster (`rate_limit` of each trigger). */
  rateLimit: TriggerRateLimit;
  /** The sandbox policy of an agent's children: where its payload file may go. */
  sandboxOf: (definition: AgentDefinition) => SandboxPolicy;
  clock: Clock;
  logger: Logger;
  /** The largest body taken (config `triggers.webhook_body_limit`), enforced by the route. */
  bodyLimitBytes: number;
  /** Where each authenticated or refused delivery of a known trigger is counted. */
  health: TriggerHealth;
  /** Masks the vault's values in a payload value cut to fit the task (the redactor's `redactText`). */
  redact?: (text: string) => string;
}

/** The longest delivery id taken (GitHub's and Standard Webhooks' are far shorter). */
const MAX_DELIVERY_ID_LENGTH = 180;
const PRINTABLE = /^[\x21-\x7e]+$/;
const utf8 = new TextDecoder("utf-8", { fatal: true });

/**
 * Webhook deliveries, in an order that tells a stranger nothing: the signature is checked first,
 * against the trigger's secret or, for an agent or trigger that does not exist, against a key
 * nobody holds, with the same work and the same 401 either way. Only an authenticated delivery is
 * read: its payload parsed, its filter applied (200 `skipped`), its run key looked up (200
 * `duplicate`, runKeyOf), the trigger's rate limit taken (429), then its payload written to a file of the
 * agent's workdir and the run started (202). Nothing here reads anything back but the run's id.
 */
export class WebhookIntake {
  readonly #options: WebhookIntakeOptions;
  /** The largest body taken, for the route to refuse a bigger one as it arrives. */
  readonly bodyLimitBytes: number;

  constructor(options: WebhookIntakeOptions) {
    this.#options = options;
    this.bodyLimitBytes = options.bodyLimitBytes;
  }

  async receive(delivery: HookDelivery): Promise<HookAnswer> {
    const trigger = this.#options.triggers().webhook(delivery.agent, delivery.name);
    const secret = trigger === undefined ? undefined : this.#options.secrets.get(trigger.settings.secret);
    const scheme = trigger?.settings.signature ?? "github";
    if (!verifyDelivery(scheme, secret, delivery.body, delivery.headers) || trigger === undefined) {
      // Counted only for a trigger that exists: a stranger's made-up names leave nothing behind.
      if (trigger !== undefined) {
        this.#options.health.record(
          trigger.definition.id,
          trigger.name,
          "refused",
          secret === undefined
            ? `the secret ${trigger.settings.secret} is not in the vault`
            : `a delivery's ${scheme} signature did not verify`,
        );
      }
      throw new AgentdError("UNAUTHORIZED", "the delivery is not signed with this webhook's secret", {
        hint: "sign it with the trigger's secret (docs/triggers.md), at /hooks/<agent>/<trigger>",
      });
    }
    const { health } = this.#options;
    const { definition, name } = trigger;
    try {
      const answer = await this.#receiveVerified(trigger, scheme, delivery.body, delivery.headers);
      health.record(definition.id, name, outcomeOf(answer));
      return answer;
    } catch (error) {
      const refused = error instanceof AgentdError && error.code === "BAD_REQUEST";
      health.record(
        definition.id,
        name,
        refused ? "refused" : "failed",
        error instanceof Error ? error.message : String(error),
      );
      throw error;
    }
  }

  /** A delivery whose signature verified: filter, duplicate, rate limit, then the run. */
  async #receiveVerified(
    trigger: ArmedTrigger<WebhookTriggerSettings>,
    scheme: WebhookTriggerSettings["signature"],
    body: Buffer,
    headers: DeliveryHeaders,
  ): Promise<HookAnswer> {
    const { runs, rateLimit } = this.#options;
    const { definition, name, settings } = trigger;
    const delivery = { body, headers };
    const deliveryId = checkedDeliveryId(deliveryIdOf(scheme, delivery.headers));
    const payload = parsePayload(delivery.body);
    if (settings.filter !== undefined && !matchesFilter(payload, settings.filter)) {
      return { status: 200, body: { skipped: true, reason: "filter" } };
    }
    const key = runKeyOf(scheme, name, deliveryId, delivery.body);
    // A GitHub run made before its key was the body's digest: keyed by its delivery id.
    const idKey =
      scheme === "github" && deliveryId !== undefined ? `webhook:${name}:${deliveryId}` : undefined;
    const recorded =
      runs.recorded(definition.id, key) ??
      (idKey === undefined ? undefined : runs.recorded(definition.id, idKey));
    if (recorded !== undefined) return duplicateOf(recorded);
    const limitKey = `${definition.id}/${name}`;
    const verdict = await rateLimit.take(limitKey, settings.rate_limit);
    if (!verdict.allowed) {
      // A duplicate is never refused: on a cluster its run may be one this node has not heard of.
      const stored = await runs.stored(definition.id, key).catch((error: unknown) => {
        this.#options.logger.warn(
          { err: error, agent: definition.id, trigger: name },
          "could not look up a delivery id",
        );
        return undefined;
      });
      if (stored !== undefined) return duplicateOf(stored);
      return {
        status: 429,
        retryAfterSeconds: verdict.retryAfterSeconds,
        body: {
          error: {
            code: "RATE_LIMITED",
            message: `the webhook "${name}" started ${settings.rate_limit.runs} runs within its window`,
            hint: `deliver it again after ${verdict.retryAfterSeconds} s (rate_limit of the trigger)`,
          },
        },
      };
    }
    try {
      const payloadFile = await this.#payloadFile(definition, name, delivery.body);
      const task = renderTaskTemplate(
        settings.task ?? defaultTask(definition),
        (variable) => {
          if (variable === "payload_file") return payloadFile;
          if (variable === "delivery") return deliveryId;
          if (variable === "trigger") return name;
          if (variable === "payload") return payload;
          if (variable.startsWith("payload.")) return valueAt(payload, variable.split(".").slice(1));
          return undefined;
        },
        this.#options.redact,
      );
      const started = await runs.startOnce(
        definition.id,
        task,
        { kind: "webhook", name, ...(deliveryId === undefined ? {} : { id: deliveryId }) },
        key,
      );
      if (started.duplicate) {
        await rateLimit.giveBack(limitKey, verdict.start);
        return duplicateOf(started.run);
      }
      this.#options.logger.info(
        { agent: definition.id, trigger: name, run: started.run.id, delivery: deliveryId },
        "webhook started a run",
      );
      return { status: 202, body: { run: started.run.id, status: started.run.status } };
    } catch (error) {
      await rateLimit.giveBack(limitKey, verdict.start);
      throw error;
    }
  }

  /** The payload as a file of the workdir; a failure is logged and the run starts without it. */
  async #payloadFile(definition: AgentDefinition, name: string, body: Buffer): Promise<string> {
    try {
      return await writePayloadFile({
        workdir: definition.workdir,
        sandbox: this.#options.sandboxOf(definition),
        trigger: name,
        body,
        now: new Date(this.#options.clock.now()),
      });
    } catch (error) {
      this.#options.logger.warn(
        { err: error, agent: definition.id, trigger: name },
        "could not write a webhook's payload into the agent's workdir",
      );
      return "(the payload could not be written to a file)";
    }
  }
}

function outcomeOf(answer: HookAnswer): TriggerOutcome {
  if (answer.status === 202) return "accepted";
  if (answer.status === 429) return "rate_limited";
  return "skipped" in answer.body ? "skipped" : "duplicate";
}

function defaultTask(definition: AgentDefinition): string {
  const own = definition.frontmatter.task;
  const line =
    'The webhook "{{trigger}}" received a delivery; its JSON payload is in the file {{payload_file}} of your working directory.';
  return own === undefined ? line : `${own}\n\n${line}`;
}

function duplicateOf(run: RunRecord): HookAnswer {
  return { status: 200, body: { run: run.id, status: run.status, duplicate: true } };
}

/**
 * The run's Idempotency-Key: what makes a repeated delivery a duplicate, for 24 h, across a restart
 * and a cluster's nodes. GitHub signs the body and not `X-GitHub-Delivery`, so its key is the
 * body's digest: a captured delivery sent again under a made-up id is the same delivery. Standard
 * Webhooks signs the id (and a timestamp): the id is the key. A bearer trigger's key is the id the
 * sender gives, else the body's digest.
 */
function runKeyOf(
  scheme: WebhookTriggerSettings["signature"],
  name: string,
  deliveryId: string | undefined,
  body: Buffer,
): string {
  if (scheme !== "github" && deliveryId !== undefined) return `webhook:${name}:${deliveryId}`;
  return `webhook:${name}:sha256:${createHash("sha256").update(body).digest("hex")}`;
}

function checkedDeliveryId(id: string | undefined): string | undefined {
  if (id === undefined) return undefined;
  if (id.length > MAX_DELIVERY_ID_LENGTH || !PRINTABLE.test(id)) {
    throw new AgentdError("BAD_REQUEST", "the delivery id is not 1 to 180 printable ASCII characters", {
      field: "webhook-id",
      hint: "send the delivery id the sender made (X-GitHub-Delivery, webhook-id)",
    });
  }
  return id;
}

/** The JSON payload; no body is `{}`. Anything that is not UTF-8 JSON is a 400 (the sender is known). */
function parsePayload(body: Buffer): unknown {
  if (body.length === 0) return {};
  try {
    return JSON.parse(utf8.decode(body)) as unknown;
  } catch (error) {
    throw new AgentdError("BAD_REQUEST", "the payload is not UTF-8 JSON", {
      field: "body",
      hint: "webhooks deliver JSON with content-type: application/json",
      cause: error,
    });
  }
}
