import type { Clock } from "../clock/clock.js";
import type { DeliveriesConfig, DeliveryTarget, DeliveryWhen } from "../config/delivery-settings.js";
import type { AgentDefinition } from "../definitions/agent-definition.js";
import type { EventDataByType } from "../events/agent-event.js";
import type { EventPublisher } from "../events/event-bus.js";
import type { Logger } from "../logging/logger.js";
import { createRunIdSource } from "../runs/run-id.js";
import type { SandboxPolicy } from "../sandbox/sandbox-policy.js";
import type { SecretRedactor } from "../secrets/secret-redactor.js";
import type { Vault } from "../vault/vault.js";
import type { AttemptOutcome } from "./attempt-outcome.js";
import { AttemptSlots } from "./attempt-slots.js";
import { boundedFacts } from "./bounded-facts.js";
import type { DeliveryFacts } from "./delivery-facts.js";
import {
  type DeliveryPage,
  type DeliveryPageQuery,
  type DeliveryRecord,
  type DeliveryStatus,
  isOpenDelivery,
  matchesDeliveryQuery,
} from "./delivery-record.js";
import { deliverySubject, deliveryText } from "./delivery-text.js";
import type { NamedTarget } from "./delivery-targets.js";
import type { DeliveryStore } from "./files-delivery-store.js";
import { credentialsOf, resolveTargetSecrets } from "./resolve-target-secrets.js";
import { nextAttempt, retryAfterMilliseconds } from "./retry-policy.js";
import { sendDelivery } from "./send-delivery.js";

/** The longest one attempt may last, whatever the receiver does (SMTP's timeouts are per reply). */
const ATTEMPT_DEADLINE_MILLISECONDS = 120_000;
/** Finished deliveries kept (the newest); every open one is kept whatever their number. */
const MAX_FINISHED_KEPT = 1_000;

export interface DeliveryServiceOptions {
  store: DeliveryStore;
  /** Where `delivery` and `warning` events go (the daemon's bus: masked, stored, streamed). */
  events: EventPublisher;
  clock: Clock;
  vault: Vault;
  redactor: SecretRedactor;
  /** Config `deliveries` with its secrets resolved. */
  config: DeliveriesConfig;
  /** The agent's current definition (its workdir and sandbox, for file targets). */
  definitionOf: (agent: string) => AgentDefinition | undefined;
  /** The sandbox policy file targets are written under (the file tools' own). */
  placeOf: (definition: AgentDefinition) => { workdir: string; sandbox: SandboxPolicy };
  logger: Logger;
}

/** One delivery to make: which target, why, and about what. */
export interface DeliveryRequest {
  agent: string;
  run: string | null;
  when: DeliveryWhen;
  target: NamedTarget;
  facts: DeliveryFacts;
}

/**
 * Deliveries of runs' outcomes (SPEC 10): each is stored before its first attempt, then tried
 * with back-off (1 s doubling, the receiver's `retry-after` honoured) until it is sent or given
 * up (8 attempts, or an hour after it was made). Every attempt is a `delivery` event of the run.
 * Nothing here is awaited by a run: a run ends first, and a slow or failing receiver never holds
 * it. Open deliveries are in the store, so a restart (or a kill -9) resumes them. A target that
 * keeps failing is told once as a `warning` event and a log line, not at every run, until it
 * works again. All waits go through the one Clock.
 */
export class DeliveryService {
  readonly #options: DeliveryServiceOptions;
  readonly #records = new Map<string, DeliveryRecord>();
  readonly #timers = new Map<string, () => void>();
  readonly #inFlight = new Set<string>();
  /** Attempts under way at once, per target and in all. */
  readonly #slots = new AttemptSlots();
  /** `<agent>/<target>` of targets whose last delivery failed: warned about already. */
  readonly #failing = new Set<string>();
  readonly #closing = new AbortController();
  readonly #idleWaiters = new Set<() => void>();
  readonly #newId: () => string;
  #closed = false;

  constructor(options: DeliveryServiceOptions) {
    this.#options = options;
    const runIds = createRunIdSource(() => new Date(options.clock.now()));
    this.#newId = () => `d_${runIds().slice(2)}`;
    // Shared targets' credentials are masked from the start, before anything could show them.
    for (const [name, target] of Object.entries(options.config.targets)) this.#maskCredentials(name, target);
    const { smtp } = options.config;
    if (smtp?.password !== undefined) this.#mask("deliveries.smtp.password", smtp.password);
  }

  /** Loads the deliveries kept and resumes the open ones (each at its due time, or now). */
  async start(): Promise<void> {
    for (const record of await this.#options.store.load()) {
      this.#records.set(record.id, record);
      if (record.status === "failed") this.#failing.add(failingKey(record));
      if (record.status === "sent") this.#failing.delete(failingKey(record));
    }
    const open = [...this.#records.values()].filter(isOpenDelivery);
    if (open.length > 0)
      this.#options.logger.info(
        { deliveries: open.length },
        "resuming deliveries not sent before the restart",
      );
    for (const record of open) {
      const due = record.next_attempt_at === undefined ? 0 : Date.parse(record.next_attempt_at);
      this.#schedule(record.id, Math.max(0, due - this.#options.clock.now()));
    }
  }

  /**
   * A cluster's store: takes over the open deliveries of nodes that died (each goes to one node)
   * and schedules those not known here yet. Resolves with how many were taken.
   */
  async adopt(): Promise<number> {
    const { store } = this.#options;
    if (store.adopt === undefined || this.#closed) return 0;
    let taken = 0;
    for (const record of await store.adopt()) {
      if (this.#records.has(record.id) || this.#closed) continue;
      this.#records.set(record.id, record);
      taken++;
      const due = record.next_attempt_at === undefined ? 0 : Date.parse(record.next_attempt_at);
      this.#schedule(record.id, Math.max(0, due - this.#options.clock.now()));
    }
    if (taken > 0)
      this.#options.logger.info({ deliveries: taken }, "took over deliveries of a node that stopped");
    return taken;
  }

  /** Stores the delivery and makes its first attempt; resolves once it is stored (never rejects). */
  async deliver(request: DeliveryRequest): Promise<DeliveryRecord | undefined> {
    if (this.#closed) return undefined;
    const { target } = request;
    // Masked before the text is made and the facts are bounded: a cut would split a value, past masking.
    const facts = boundedFacts(this.#options.redactor.redactValue({ ...request.facts }));
    const kind = target.target.to;
    const now = new Date(this.#options.clock.now()).toISOString();
    const subject = target.target.to === "email" ? deliverySubject(facts, target.target.subject) : undefined;
    const record: DeliveryRecord = {
      id: this.#newId(),
      agent: request.agent,
      run: request.run,
      target: target.name,
      to: kind,
      when: request.when,
      status: "pending",
      content: {
        text: this.#options.redactor.redact(deliveryText(kind, facts, target.target.template)),
        ...(subject === undefined ? {} : { subject: this.#options.redactor.redact(subject) }),
        facts,
      },
      attempts: [],
      created_at: now,
      updated_at: now,
      spec: target.shared ? {} : { ...target.target },
      ...(target.shared ? { shared: true } : {}),
    };
    this.#records.set(record.id, record);
    try {
      await this.#save();
    } catch (error) {
      // Not stored: tried anyway, once, but a restart will not resume it.
      this.#options.logger.warn(
        { err: error, delivery: record.id },
        "could not store a delivery; sending it anyway",
      );
    }
    this.#schedule(record.id, 0);
    return record;
  }

  /** Whether a delivery of the run to the target, for one of these occasions, is held here. */
  holdsEndDelivery(run: string, target: string, occasions: readonly DeliveryWhen[]): boolean {
    for (const record of this.#records.values()) {
      if (record.run === run && record.target === target && occasions.includes(record.when)) return true;
    }
    return false;
  }

  /** Deliveries, newest first, optionally of one status. */
  list(status?: DeliveryStatus): DeliveryRecord[] {
    const all = [...this.#records.values()].filter(
      (record) => status === undefined || record.status === status,
    );
    return all.sort((left, right) => (left.id < right.id ? 1 : left.id > right.id ? -1 : 0));
  }

  /**
   * A page of deliveries, newest first (`GET /deliveries`): this daemon's, or on a cluster every
   * node's as the store has them — those this node holds as it knows them now (its latest attempt
   * may not be written yet), so every node answers the same list.
   */
  async page(query: DeliveryPageQuery): Promise<DeliveryPage> {
    const { store } = this.#options;
    const found =
      store.page === undefined
        ? this.list(query.status).filter(
            (record) =>
              matchesDeliveryQuery(record, query) && (query.before === undefined || record.id < query.before),
          )
        : await store.page({ ...query, limit: query.limit + 1 });
    const page = found.slice(0, query.limit);
    const last = page.at(-1);
    return {
      deliveries: page
        .map((record) => this.#records.get(record.id) ?? record)
        .filter((record) => matchesDeliveryQuery(record, query)),
      next: found.length > page.length && last !== undefined ? last.id : null,
    };
  }

  /** How many deliveries are in each status (metrics). */
  counts(): Record<DeliveryStatus, number> {
    const counts = { pending: 0, retrying: 0, sent: 0, failed: 0 };
    for (const record of this.#records.values()) counts[record.status]++;
    return counts;
  }

  /** Resolves once no attempt is under way and no delivery waits for its first one. */
  idle(): Promise<void> {
    if (this.#isIdle()) return Promise.resolve();
    return new Promise((resolve) => this.#idleWaiters.add(resolve));
  }

  #isIdle(): boolean {
    if (this.#inFlight.size > 0) return false;
    for (const record of this.#records.values()) if (record.status === "pending") return false;
    return true;
  }

  /** Stops every timer and attempt under way (they resume at the next start) and waits for the store. */
  async close(): Promise<void> {
    this.#closed = true;
    this.#closing.abort();
    for (const cancel of this.#timers.values()) cancel();
    this.#timers.clear();
    await this.#options.store.settled().catch(() => undefined);
  }

  #schedule(id: string, delayMilliseconds: number): void {
    if (this.#closed) return;
    this.#timers.get(id)?.();
    this.#timers.delete(id);
    if (delayMilliseconds <= 0) {
      // Due now: no timer (a clock moved by hand would hold it until its next move).
      setImmediate(() => void this.#attempt(id));
      return;
    }
    const cancel = this.#options.clock.setTimer(() => {
      this.#timers.delete(id);
      void this.#attempt(id);
    }, delayMilliseconds);
    this.#timers.set(id, cancel);
  }

  async #attempt(id: string): Promise<void> {
    const record = this.#records.get(id);
    if (!record || !isOpenDelivery(record) || this.#inFlight.has(id) || this.#closed) return;
    this.#inFlight.add(id);
    let told: { event: EventDataByType["delivery"]; retryAt?: number } | undefined;
    try {
      const outcome = await this.#slots.run(slotKey(record), () =>
        this.#closing.signal.aborted ? Promise.resolve(undefined) : this.#sendWithDeadline(record),
      );
      // Cut off by the shutdown (or closed while it waited for a slot): not an attempt; the next start makes it again.
      if (outcome === undefined || this.#closing.signal.aborted) return;
      told = this.#apply(record, outcome);
    } catch (error) {
      this.#options.logger.error({ err: error, delivery: id }, "a delivery attempt failed unexpectedly");
    } finally {
      this.#inFlight.delete(id);
      if (this.#isIdle()) {
        for (const resolve of this.#idleWaiters) resolve();
        this.#idleWaiters.clear();
      }
    }
    if (told === undefined) return;
    // The next attempt is armed before anyone hears of this one.
    if (told.retryAt !== undefined) this.#schedule(id, told.retryAt - this.#options.clock.now());
    this.#options.events.publish({
      agent: record.agent,
      run: record.run,
      type: "delivery",
      data: told.event,
    });
    if (record.status === "failed") this.#warnOnce(record, told.event.error ?? "failed");
    await this.#save().catch((saveError: unknown) => {
      this.#options.logger.warn(
        { err: saveError, delivery: record.id },
        "could not store a delivery's attempt",
      );
    });
  }

  /**
   * One attempt, cut off after ATTEMPT_DEADLINE_MILLISECONDS on the daemon's clock however the
   * receiver trickles its answer: an attempt holds one of its target's slots, so none may last for
   * ever (an SMTP server sending a byte every 20 s passes each of its 30 s timeouts).
   */
  async #sendWithDeadline(record: DeliveryRecord): Promise<AttemptOutcome> {
    const deadline = new AbortController();
    const seconds = ATTEMPT_DEADLINE_MILLISECONDS / 1_000;
    const cutOff = new Promise<AttemptOutcome>((resolve) => {
      deadline.signal.addEventListener("abort", () =>
        resolve({
          ok: false,
          retryable: true,
          error: `the ${record.to} attempt did not end within ${seconds} s: cut off`,
        }),
      );
    });
    const cancel = this.#options.clock.setTimer(() => deadline.abort(), ATTEMPT_DEADLINE_MILLISECONDS);
    try {
      // The send is told to stop too, and its late outcome is dropped: the slot is free at the deadline.
      const sending = this.#send(record, AbortSignal.any([this.#closing.signal, deadline.signal]));
      // A send that fails after the deadline won the race has no one left to hear it.
      sending.catch(() => undefined);
      return await Promise.race([sending, cutOff]);
    } finally {
      cancel();
    }
  }

  async #send(record: DeliveryRecord, signal: AbortSignal): Promise<AttemptOutcome> {
    const spec = record.shared ? this.#options.config.targets[record.target] : record.spec;
    if (spec === undefined) {
      return {
        ok: false,
        retryable: false,
        error: `target "${record.target}" is no longer in config deliveries.targets`,
      };
    }
    let target: DeliveryTarget;
    try {
      target = await resolveTargetSecrets(spec, this.#options.vault, this.#options.redactor, record.target);
    } catch (error) {
      return { ok: false, retryable: false, error: error instanceof Error ? error.message : String(error) };
    }
    const definition = this.#options.definitionOf(record.agent);
    return sendDelivery(target, record.content, {
      id: record.id,
      now: this.#options.clock.now(),
      madeAt: Date.parse(record.created_at),
      smtp: this.#options.config.smtp,
      place: definition === undefined ? undefined : this.#options.placeOf(definition),
      remainingRecipients: record.remaining_recipients,
      signal,
    });
  }

  /** An attempt's error masked, with a value its cut excerpt of the answer leaves in part. */
  #maskedError(outcome: AttemptOutcome & { ok: false }): string {
    const masked = this.#options.redactor.redact(outcome.error);
    return outcome.cutAtEnd === true ? this.#options.redactor.redactCutEnd(masked) : masked;
  }

  /** The attempt added to the record; what to tell, and when to try again. */
  #apply(
    record: DeliveryRecord,
    outcome: AttemptOutcome,
  ): { event: EventDataByType["delivery"]; retryAt?: number } {
    const now = this.#options.clock.now();
    const at = new Date(now).toISOString();
    const attempt = record.attempts.length + 1;
    const error = outcome.ok ? undefined : this.#maskedError(outcome);
    record.attempts.push({
      at,
      ok: outcome.ok,
      ...(outcome.statusCode === undefined ? {} : { status_code: outcome.statusCode }),
      ...(error === undefined ? {} : { error }),
    });
    record.updated_at = at;
    delete record.next_attempt_at;
    if (!outcome.ok && outcome.remainingRecipients !== undefined) {
      record.remaining_recipients = outcome.remainingRecipients;
    }
    if (!outcome.ok && outcome.refusedForGood !== undefined) {
      record.refused_recipients = [
        ...new Set([...(record.refused_recipients ?? []), ...outcome.refusedForGood]),
      ];
    }
    const base = { target: record.target, attempt, delivery: record.id };
    if (outcome.ok && record.refused_recipients !== undefined) {
      // The others have it now; the addresses refused for good never will: the user must see them.
      record.status = "failed";
      delete record.remaining_recipients;
      const refused = record.refused_recipients.join(", ");
      const said = `sent to the recipients still owed it; ${refused} refused for good by an earlier attempt: correct the address (not retried)`;
      return { event: { ...base, status: "failed", error: said } };
    }
    if (outcome.ok) {
      record.status = "sent";
      // Everyone has it now: a sent delivery listing addresses "still owed it" would read as a half failure.
      delete record.remaining_recipients;
      if (this.#failing.delete(failingKey(record))) {
        this.#options.logger.info(
          { agent: record.agent, target: record.target },
          "delivery target works again",
        );
      }
      return { event: { ...base, status: "sent" } };
    }
    const decision = outcome.retryable
      ? nextAttempt(
          attempt,
          Date.parse(record.created_at),
          now,
          retryAfterMilliseconds(outcome.retryAfter, now),
        )
      : { retry: false as const, why: "not retried" };
    if (decision.retry) {
      record.status = "retrying";
      record.next_attempt_at = new Date(decision.at).toISOString();
      const event = { ...base, status: "retrying" as const, next_attempt_at: record.next_attempt_at };
      return { event: error === undefined ? event : { ...event, error }, retryAt: decision.at };
    }
    record.status = "failed";
    return { event: { ...base, status: "failed", error: `${error ?? "failed"} (${decision.why})` } };
  }

  /** The first failure of a target since it last worked: a warning event and a log line; later ones are not. */
  #warnOnce(record: DeliveryRecord, error: string): void {
    const key = failingKey(record);
    if (this.#failing.has(key)) return;
    this.#failing.add(key);
    const message = `delivery target "${record.target}" (${record.to}) failed: ${error}; later failures of it are not reported again until it works`;
    this.#options.logger.warn({ agent: record.agent, target: record.target, delivery: record.id }, message);
    this.#options.events.publish({
      agent: record.agent,
      run: record.run,
      type: "warning",
      data: { code: "DELIVERY_FAILED", message },
    });
  }

  #save(): Promise<void> {
    const all = [...this.#records.values()];
    const finished = all.filter((record) => !isOpenDelivery(record));
    for (const old of finished.slice(0, Math.max(0, finished.length - MAX_FINISHED_KEPT))) {
      this.#records.delete(old.id);
    }
    return this.#options.store.save([...this.#records.values()]);
  }

  #maskCredentials(name: string, target: DeliveryTarget): void {
    for (const credential of credentialsOf(target)) this.#mask(`deliveries.${name}`, credential);
  }

  #mask(name: string, value: string): void {
    if (value.length >= 8 && !this.#options.redactor.knows(value)) this.#options.redactor.add(name, value);
  }
}

/** Where an attempt goes: a config target is one destination whichever agents name it. */
function slotKey(record: DeliveryRecord): string {
  return record.shared === true ? `config:${record.target}` : failingKey(record);
}

function failingKey(record: DeliveryRecord): string {
  return `${record.agent}/${record.target}`;
}
