import { AuditRecorder } from "../access/audit-recorder.js";
import { AuditRetention } from "../access/audit-retention.js";
import { TokenRegistry } from "../access/token-registry.js";
import type { Clock } from "../clock/clock.js";
import type { Config } from "../config/config-schema.js";
import type { EventDraft } from "../events/agent-event.js";
import type { Actor } from "../events/actor.js";
import type { Logger } from "../logging/logger.js";
import type { RunRecord, RunTrigger } from "../run-vocabulary/run-record.js";
import { openAccessStores } from "../store/open-access-stores.js";
import type { StorageGate } from "../util/storage-gate.js";

/** The daemon's named tokens and its audit trail. */
export interface DaemonAccess {
  /** Undefined with `server.auth: none`. */
  tokens: TokenRegistry | undefined;
  audit: AuditRecorder;
  close(): Promise<void>;
}

export interface OpenDaemonAccessOptions {
  config: Config;
  logger: Logger;
  clock: Clock;
  /** This node's id on a cluster. */
  node?: string | undefined;
  /** The daemon's own token (admin); undefined with `server.auth: none`. */
  token: string | undefined;
  /** Publishes the `audit` events (the daemon's bus). */
  publish: (draft: EventDraft) => void;
  /** The store's state, told of an audit entry refused for lack of room. */
  storage?: Pick<StorageGate, "failed"> | undefined;
}

/** Opens the token store and the audit log beside the daemon's store, and the registry on them. */
export async function openDaemonAccess(options: OpenDaemonAccessOptions): Promise<DaemonAccess> {
  const logger = options.logger.child({ module: "access" });
  const stores = await openAccessStores({
    config: options.config,
    logger,
    clock: options.clock,
    ...(options.node === undefined ? {} : { node: options.node }),
  });
  try {
    const tokens =
      options.token === undefined
        ? undefined
        : await TokenRegistry.open({
            defaultToken: options.token,
            store: stores.tokens,
            logger,
            clock: options.clock,
          });
    const audit = new AuditRecorder({
      log: stores.audit,
      logger,
      publish: options.publish,
      ...(options.storage === undefined ? {} : { storage: options.storage }),
    });
    // Entries past `retention.audit_days` are deleted at start and every hour, as run history is.
    const retention = new AuditRetention({
      log: stores.audit,
      days: options.config.retention.audit_days,
      clock: options.clock,
      logger,
    });
    retention.start();
    return {
      tokens,
      audit,
      close: async () => {
        await retention.stop();
        tokens?.close();
        await stores.close();
      },
    };
  } catch (error) {
    await stores.close();
    throw error;
  }
}

/**
 * The actor of a run started otherwise than through the API, from its trigger: the scheduler
 * (`schedule`, named after the agent), a trigger (`trigger`, `<kind>:<name>`), `agentd run` (`cli`,
 * the local user), a sub-agent's parent run (`system`, named by the parent run's id).
 */
export function actorOfTrigger(agentId: string, trigger: RunTrigger, localUser = "unknown"): Actor {
  const kind = (trigger as { kind: string }).kind;
  if (kind === "schedule" || kind === "missed") return { kind: "schedule", name: agentId };
  if (kind === "cli") return { kind: "cli", name: localUser };
  if (kind === "agent")
    return { kind: "system", name: (trigger as { parent_run?: string }).parent_run ?? "run" };
  const name = (trigger as { name?: string }).name;
  return { kind: "trigger", name: name === undefined ? kind : `${kind}:${name}` };
}

/**
 * Records each run created otherwise than through the API (whose route records the request's
 * actor) in the audit trail, with the `audit` event in the run's stream: schedules, triggers,
 * sub-agents and `agentd run`.
 */
export function auditedRunStarts(
  audit: Pick<AuditRecorder, "record">,
  localUser?: string,
): (record: RunRecord) => Promise<void> {
  return async (record) => {
    if (record.trigger.kind === "api") return;
    await audit.record({
      action: "run.start",
      actor: actorOfTrigger(record.agent, record.trigger, localUser),
      agent: record.agent,
      run: record.id,
      ...(record.parent_run === undefined ? {} : { details: { parent_run: record.parent_run } }),
    });
  };
}
