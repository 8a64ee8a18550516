import type { Config } from "../../config/config-schema.js";
import type { DefinitionSnapshot } from "../../definitions/definition-snapshot.js";
import type { SandboxHost } from "../../sandbox/sandbox-host.js";
import { checkTriggers } from "../../triggers/check-triggers.js";
import { createVault } from "../../vault/create-vault.js";
import type { ValidationReport } from "./validate.js";

type AgentEntry = ValidationReport["agents"][number];

/**
 * `agentd validate`'s trigger checks (src/triggers/check-triggers.ts) added to the agents' entries:
 * an error makes the agent invalid here. The vault is opened only when some agent has a trigger.
 */
export async function checkProjectTriggers(
  snapshot: DefinitionSnapshot,
  entries: AgentEntry[],
  context: { config: Config; sandbox: SandboxHost; environment?: NodeJS.ProcessEnv | undefined },
): Promise<AgentEntry[]> {
  const definitions = snapshot.agents.flatMap((status) =>
    status.valid && status.definition !== undefined && status.definition.frontmatter.triggers.length > 0
      ? [status.definition]
      : [],
  );
  if (definitions.length === 0) return entries;
  const findings = await checkTriggers(definitions, {
    agentIds: [...new Set(snapshot.agents.map((status) => status.id))],
    vault: createVault(context.config, context.environment),
    sandboxOf: (definition) =>
      context.sandbox.policyFor({
        settings: definition.sandbox,
        workdir: definition.workdir,
        owner: `agent "${definition.id}"`,
      }),
  });
  return entries.map((entry) => {
    const found = findings.get(entry.id);
    if (found === undefined || !entry.valid) return entry;
    return {
      ...entry,
      valid: found.errors.length === 0,
      errors: [...entry.errors, ...found.errors.map((error) => error.toJSON())],
      warnings: [...entry.warnings, ...found.warnings],
    };
  });
}
