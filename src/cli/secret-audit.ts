import type { AuditAction } from "../access/audit-entry.js";
import type { Config } from "../config/config-schema.js";
import { createLogger } from "../logging/logger.js";
import { openAuditRecorder } from "../store/open-access-stores.js";
import { localUserName as localUser } from "../util/local-user.js";

/**
 * Records a vault change made by `agentd secrets` in the audit trail of the config's store (the
 * secret's name only, never its value), as actor `{ kind: "cli", name: <user> }`. A trail that
 * cannot be written is reported on stderr; the change stands.
 */
export async function recordSecretChange(
  config: Config,
  action: Extract<AuditAction, "secret.set" | "secret.remove">,
  name: string,
  warn: (line: string) => void,
): Promise<void> {
  const logger = createLogger({ level: "silent", pretty: false });
  try {
    const { recorder, close } = await openAuditRecorder({ config, logger });
    try {
      const entry = await recorder.record({
        action,
        actor: { kind: "cli", name: localUser() },
        target: name,
      });
      if (entry === undefined) warn(`warning: could not record ${action} ${name} in the audit trail`);
    } finally {
      await close();
    }
  } catch (error) {
    warn(`warning: could not record ${action} ${name} in the audit trail: ${(error as Error).message}`);
  }
}
