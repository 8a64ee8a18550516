import { AgentdError } from "../errors/agentd-error.js";

/** The same rule as an agent's `secrets:` list: letters, digits, `_`, `.`, `-`. */
export const SECRET_NAME_PATTERN = /^[A-Za-z0-9_.-]+$/;

/** Throws USAGE for a name no agent could reference. */
export function assertSecretName(name: string): void {
  if (SECRET_NAME_PATTERN.test(name)) return;
  throw new AgentdError("USAGE", `"${name}" is not a valid secret name`, {
    hint: "use letters, digits, _ . - (the same names an agent lists under secrets:)",
  });
}
