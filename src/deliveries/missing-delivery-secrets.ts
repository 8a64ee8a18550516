import type { AgentDefinition } from "../definitions/agent-definition.js";
import { AgentdError } from "../errors/agentd-error.js";
import { secretNamesIn } from "../secrets/secret-template.js";
import type { Vault } from "../vault/vault.js";

/**
 * For `agentd validate`: a SECRET_NOT_FOUND per `{{secret:name}}` of an agent's `deliver:` targets
 * that the vault does not hold (each delivery to it would fail). The vault is asked only for the
 * names, and only when some target uses one; a vault that cannot be listed reports nothing here.
 */
export async function missingDeliverySecrets(
  definition: AgentDefinition,
  vault: Vault,
): Promise<AgentdError[]> {
  const names = secretNamesIn(definition.frontmatter.deliver);
  if (names.length === 0) return [];
  let known: string[];
  try {
    known = await vault.list();
  } catch {
    return [];
  }
  return names
    .filter((name) => !known.includes(name))
    .map(
      (name) =>
        new AgentdError("SECRET_NOT_FOUND", `deliver: secret "${name}" is not in the vault`, {
          file: definition.file,
          field: "deliver",
          hint: `agentd secrets set ${name}`,
        }),
    );
}
