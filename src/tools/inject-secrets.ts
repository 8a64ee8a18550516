import type { AgentDefinition } from "../definitions/agent-definition.js";
import { AgentdError } from "../errors/agentd-error.js";
import type { SecretRedactor } from "../secrets/secret-redactor.js";
import { secretNamesIn, substituteSecrets } from "../secrets/secret-template.js";
import type { Vault } from "../vault/vault.js";
import type { ToolDefinition } from "./tool-definition.js";

/** The secrets one call uses, checked against the agent's list; values read only by `resolve`. */
export interface SecretInjection {
  names: string[];
  /** Reads each value from the vault (teaching the redactor) and returns the arguments with them. */
  resolve(vault: Vault, redactor: SecretRedactor): Promise<unknown>;
}

/**
 * Finds the `{{secret:name}}` references in a call's arguments. A name the agent's `secrets` list
 * does not hold is refused here, before any approval is asked and before the vault is read.
 */
export function injectSecrets(
  value: unknown,
  tool: ToolDefinition,
  definition: AgentDefinition,
): SecretInjection {
  const names = secretNamesIn(value);
  const allowed = new Set(definition.frontmatter.secrets);
  const forbidden = names.filter((name) => !allowed.has(name));
  if (forbidden.length > 0) {
    throw new AgentdError(
      "SECRET_NOT_ALLOWED",
      `agent "${definition.id}" may not use secret${forbidden.length > 1 ? "s" : ""} ${forbidden.map((name) => `"${name}"`).join(", ")}`,
      { file: definition.file, field: "secrets", hint: "add the name to the agent's `secrets` list" },
    );
  }
  return {
    names,
    resolve: async (vault, redactor) => {
      if (names.length === 0) return value;
      const values = new Map<string, string>();
      for (const name of names) {
        const secret = await vault.get(name);
        if (secret === undefined) {
          throw new AgentdError("SECRET_NOT_FOUND", `secret "${name}" is not in the ${vault.backend} vault`, {
            hint: `set it with: agentd secrets set ${name}`,
          });
        }
        redactor.add(name, secret);
        values.set(name, secret);
      }
      const secretValue = (name: string) => values.get(name) ?? "";
      return tool.substitute ? tool.substitute(value, secretValue) : substituteSecrets(value, secretValue);
    },
  };
}
