import type { EventDraft } from "../events/agent-event.js";
import type { Logger } from "../logging/logger.js";
import type { StorageGate } from "../util/storage-gate.js";
import type { AuditDraft, AuditEntry } from "./audit-entry.js";
import type { AuditLog } from "./audit-log.js";

export interface AuditRecorderOptions {
  log: AuditLog;
  logger: Logger;
  /** Publishes the `audit` event of an action on an agent (absent: the log only, e.g. the CLI). */
  publish?: (draft: EventDraft) => void;
  /**
   * The daemon's store state: an entry refused for lack of room (ENOSPC, EDQUOT, EROFS) makes the
   * store full, as an event or a run record would (`/health` degraded, new runs refused).
   */
  storage?: Pick<StorageGate, "failed">;
}

/**
 * Records who did what: an entry in the audit log and, for an action on an agent or a run, an
 * `audit` event in that agent's stream (and the run's log) carrying the actor. The action has
 * happened when this is called: a log that cannot be written is reported, never undoes it.
 */
export class AuditRecorder {
  readonly #options: AuditRecorderOptions;

  constructor(options: AuditRecorderOptions) {
    this.#options = options;
  }

  async record(draft: AuditDraft): Promise<AuditEntry | undefined> {
    if (draft.agent !== undefined && this.#options.publish) {
      try {
        this.#options.publish({
          agent: draft.agent,
          run: draft.run ?? null,
          type: "audit",
          data: {
            action: draft.action,
            actor: draft.actor,
            ...(draft.target === undefined ? {} : { target: draft.target }),
          },
        });
      } catch (error) {
        this.#options.logger.warn({ err: error, action: draft.action }, "could not publish an audit event");
      }
    }
    try {
      return await this.#options.log.append(draft);
    } catch (error) {
      this.#options.storage?.failed(error);
      this.#options.logger.error(
        { err: error, action: draft.action, actor: draft.actor },
        "could not append to the audit log",
      );
      return undefined;
    }
  }

  page(after: string | undefined, limit: number): Promise<AuditEntry[]> {
    return this.#options.log.page(after, limit);
  }
}
