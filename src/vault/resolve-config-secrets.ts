import type { Config } from "../config/config-schema.js";
import { AgentdError } from "../errors/agentd-error.js";
import type { SecretRedactor } from "../secrets/secret-redactor.js";
import { SECRET_TEMPLATE } from "../secrets/secret-template.js";
import type { Vault } from "./vault.js";

/**
 * Replaces `{{secret:name}}` in every string value of the config (`llm.api_key: "{{secret:openai}}"`)
 * with the vault's value, and teaches `redactor` each value so it is masked wherever it shows up.
 * A missing secret is SECRET_NOT_FOUND naming the config key.
 */
export async function resolveConfigSecrets(
  config: Config,
  vault: Vault,
  redactor?: SecretRedactor,
): Promise<Config> {
  return (await resolveValue(config, [], vault, redactor)) as Config;
}

async function resolveValue(
  value: unknown,
  keyPath: string[],
  vault: Vault,
  redactor: SecretRedactor | undefined,
): Promise<unknown> {
  if (typeof value === "string") return resolveString(value, keyPath, vault, redactor);
  if (Array.isArray(value)) {
    return Promise.all(
      value.map((item, index) => resolveValue(item, [...keyPath, String(index)], vault, redactor)),
    );
  }
  if (value !== null && typeof value === "object") {
    const resolved: Record<string, unknown> = {};
    for (const [key, item] of Object.entries(value)) {
      resolved[key] = await resolveValue(item, [...keyPath, key], vault, redactor);
    }
    return resolved;
  }
  return value;
}

async function resolveString(
  text: string,
  keyPath: string[],
  vault: Vault,
  redactor: SecretRedactor | undefined,
): Promise<string> {
  const names = [...text.matchAll(SECRET_TEMPLATE)].map((match) => match[1] as string);
  if (names.length === 0) return text;
  const values = new Map<string, string>();
  for (const name of names) {
    const value = await vault.get(name);
    if (value === undefined) {
      throw new AgentdError(
        "SECRET_NOT_FOUND",
        `config ${keyPath.join(".")} uses the secret "${name}", which the ${vault.backend} vault does not hold`,
        {
          field: keyPath.join("."),
          hint: `store it with: agentd secrets set ${name}`,
        },
      );
    }
    values.set(name, value);
    redactor?.add(name, value);
  }
  return text.replace(SECRET_TEMPLATE, (_match, name: string) => values.get(name) ?? "");
}
