import type { Clock } from "../clock/clock.js";
import type { AgentDefinition } from "../definitions/agent-definition.js";
import type { EventFeed } from "../events/event-bus.js";
import type { Logger } from "../logging/logger.js";
import type { SandboxPolicy } from "../sandbox/sandbox-policy.js";
import type { Vault } from "../vault/vault.js";
import { OwedRunEnds } from "../util/owed-run-ends.js";
import type { StorageGate } from "../util/storage-gate.js";
import { type FollowedRunEnds, followRunEnds } from "./after-triggers.js";
import { DeliveryRateLimit, type TriggerRateLimit } from "./delivery-rate-limit.js";
import { triggerDetail } from "./trigger-detail.js";
import { TriggerHealth, type TriggerStatus, triggerKeyOf } from "./trigger-health.js";
import { kindOf } from "./trigger-schema.js";
import type { TriggerRuns } from "./trigger-runs.js";
import { TriggerSecrets } from "./trigger-secrets.js";
import { TriggerSet } from "./trigger-set.js";
import { WatchTriggers } from "./watch-triggers.js";
import { WebhookIntake } from "./webhook-intake.js";

export interface TriggersOptions {
  vault: Vault;
  bus: EventFeed;
  runs: TriggerRuns;
  /** The sandbox policy of an agent's children (what it may read, where its workdir is). */
  sandboxOf: (definition: AgentDefinition) => SandboxPolicy;
  clock: Clock;
  logger: Logger;
  /** Config `triggers.webhook_body_limit`. */
  webhookBodyLimitBytes: number;
  /** Where webhook starts are counted; default this daemon's memory (a cluster's store counts them all). */
  rateLimit?: TriggerRateLimit | undefined;
  /** Masks the vault's values in a text (the redactor's `redactText`): errors kept, payloads cut. */
  redact?: (text: string) => string;
  /**
   * Where the runs whose `after` triggers are not decided yet are kept across a kill -9
   * (`<data_dir>/follow-ups/after-triggers.jsonl`); absent, nothing is kept.
   */
  owedFile?: string | undefined;
  /** The store's storage gate (files store): the owed file's writes refused for lack of room wait on it. */
  storage?: StorageGate | undefined;
}

/**
 * Every trigger of the agents served (SPEC 10): the webhook intake the API's `/hooks` route hands
 * deliveries to, the `after` triggers following run ends on the bus, and the watched folders.
 * `apply` follows the definitions; `close` stops watching and following.
 */
export class Triggers {
  readonly intake: WebhookIntake;
  readonly #secrets: TriggerSecrets;
  readonly #watches: WatchTriggers;
  readonly #following: FollowedRunEnds;
  readonly #owed: OwedRunEnds | undefined;
  #owedAtStart: string[] = [];
  readonly #logger: Logger;
  readonly #health: TriggerHealth;
  #set = new TriggerSet([]);
  #applying: Promise<void> = Promise.resolve();

  constructor(options: TriggersOptions) {
    const triggers = () => this.#set;
    this.#logger = options.logger;
    const health = new TriggerHealth(options.clock, options.redact);
    this.#health = health;
    this.#secrets = new TriggerSecrets(options.vault, options.logger, options.clock);
    // One count per trigger, whatever its kind: webhooks' and watches' starts alike.
    const rateLimit = options.rateLimit ?? new DeliveryRateLimit(options.clock);
    this.intake = new WebhookIntake({
      triggers,
      secrets: this.#secrets,
      runs: options.runs,
      rateLimit,
      sandboxOf: options.sandboxOf,
      clock: options.clock,
      logger: options.logger,
      bodyLimitBytes: options.webhookBodyLimitBytes,
      health,
      ...(options.redact ? { redact: options.redact } : {}),
    });
    this.#watches = new WatchTriggers({ ...options, rateLimit, health });
    this.#owed =
      options.owedFile === undefined
        ? undefined
        : new OwedRunEnds(options.owedFile, undefined, options.storage);
    try {
      this.#owedAtStart = (this.#owed?.load() ?? []).map(({ run }) => run);
    } catch (error) {
      options.logger.error(
        { err: error },
        "could not read the runs owed after triggers; those of runs that ended just before a crash start nothing",
      );
    }
    this.#following = followRunEnds({
      bus: options.bus,
      triggers,
      runs: options.runs,
      logger: options.logger,
      health,
      owed: this.#owed,
    });
  }

  /**
   * Starts the `after` triggers' runs of upstream runs that ended before this start without them
   * (a kill -9 between a run's end and its followers), with the triggers as they are now: call
   * once `apply` has served them. Resolves once those runs are recorded.
   */
  async recoverRunEnds(): Promise<void> {
    const owed = this.#owedAtStart;
    this.#owedAtStart = [];
    await this.#applying.catch(() => undefined);
    await this.#following.recover(owed).catch((error: unknown) => {
      this.#logger.error(
        { err: error },
        "could not start the after triggers of runs that ended just before a crash",
      );
    });
  }

  /** Every trigger served, with its health on this daemon since it started (`GET /triggers`). */
  list(): TriggerStatus[] {
    return this.#set.all.map(({ definition, name, settings }) => {
      const kind = kindOf(settings);
      return {
        agent: definition.id,
        name,
        kind,
        detail: triggerDetail(definition.id, settings),
        ...this.#health.of(definition.id, name),
        ...(kind === "watch" ? { watching: this.#watches.watches(triggerKeyOf(definition.id, name)) } : {}),
      };
    });
  }

  /** Serves the triggers of these definitions; resolves once secrets are read and folders watched. */
  apply(definitions: readonly AgentDefinition[]): Promise<void> {
    const set = new TriggerSet(definitions);
    this.#applying = this.#applying
      .catch(() => undefined)
      .then(async () => {
        await this.#secrets.load(set.secretNames());
        this.#set = set;
        this.#health.retain(
          new Set(set.all.map(({ definition, name }) => triggerKeyOf(definition.id, name))),
        );
        await this.#watches.apply(set.watches);
      })
      // A watcher that cannot start must not stop the daemon: the other triggers still serve.
      .catch((error: unknown) => this.#logger.warn({ err: error }, "could not apply the agents' triggers"));
    return this.#applying;
  }

  async close(): Promise<void> {
    this.#following.unsubscribe();
    this.#owed?.close();
    this.#secrets.close();
    await this.#applying.catch(() => undefined);
    await this.#watches.close();
  }
}
