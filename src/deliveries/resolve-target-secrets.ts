import { DeliveryTargetSchema, type DeliveryTarget } from "../config/delivery-settings.js";
import type { SecretRedactor } from "../secrets/secret-redactor.js";
import { secretNamesIn, substituteSecrets } from "../secrets/secret-template.js";
import type { Vault } from "../vault/vault.js";

/** Values shorter than this are placeholders, not credentials worth masking everywhere. */
const MIN_CREDENTIAL_LENGTH = 8;

/**
 * The target with every `{{secret:name}}` replaced by the vault's value, read now (a secret set or
 * rotated meanwhile is used at the next attempt). Each value, and each credential written inline
 * (a Slack or Discord URL, a Telegram token, a webhook secret), is taught to the redactor, so no
 * event, log line, error or API answer shows it. Throws SECRET_NOT_FOUND's message as an Error.
 */
export async function resolveTargetSecrets(
  spec: Record<string, unknown>,
  vault: Vault,
  redactor: SecretRedactor,
  targetName: string,
): Promise<DeliveryTarget> {
  const values = new Map<string, string>();
  for (const name of secretNamesIn(spec)) {
    const value = await vault.get(name);
    if (value === undefined)
      throw new Error(`secret "${name}" is not in the vault (agentd secrets set ${name})`);
    if (!redactor.knows(value)) redactor.add(name, value);
    values.set(name, value);
  }
  const target = DeliveryTargetSchema.parse(substituteSecrets(spec, (name) => values.get(name) ?? ""));
  for (const credential of credentialsOf(target)) {
    if (credential.length >= MIN_CREDENTIAL_LENGTH && !redactor.knows(credential)) {
      redactor.add(`deliveries.${targetName}`, credential);
    }
  }
  return target;
}

/** The fields of a target that are credentials whoever reads them. */
export function credentialsOf(target: DeliveryTarget): string[] {
  switch (target.to) {
    case "webhook":
      return [target.secret];
    case "slack":
    case "discord":
      return [target.url];
    case "telegram":
      return [target.token];
    default:
      return [];
  }
}
