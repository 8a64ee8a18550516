import { realpathSync, statSync } from "node:fs";
import path from "node:path";
import { Webhook } from "standardwebhooks";
import type { AgentDefinition } from "../definitions/agent-definition.js";
import { AgentdError } from "../errors/agentd-error.js";
import type { SandboxPolicy } from "../sandbox/sandbox-policy.js";
import { didYouMean } from "../schema/known-keys.js";
import { fileAccessOf } from "../tools/workdir/file-access.js";
import type { Vault } from "../vault/vault.js";
import { nameOf } from "./trigger-schema.js";

/** What `agentd validate` adds about one agent's triggers. */
export interface TriggerFindings {
  errors: AgentdError[];
  warnings: string[];
}

export interface CheckTriggersOptions {
  /** Every agent id of the folders (an `after` may follow any of them). */
  agentIds: readonly string[];
  vault: Vault;
  sandboxOf: (definition: AgentDefinition) => SandboxPolicy;
}

/**
 * The checks on triggers that need more than the agent file (the schema already refuses an
 * unknown template variable and a webhook without a `{{secret:…}}`): a webhook secret missing from
 * the vault or not a Standard Webhooks key, an `after` of an unknown agent, a watched folder that
 * is missing or hidden from the agent (errors); `after` triggers that form a cycle (a warning: the
 * daemon never starts the run that would close it); webhooks that share a secret (a warning: no
 * scheme signs the URL, so a delivery captured at one would start the other's agent).
 */
export async function checkTriggers(
  definitions: readonly AgentDefinition[],
  options: CheckTriggersOptions,
): Promise<Map<string, TriggerFindings>> {
  const findings = new Map<string, TriggerFindings>();
  const follows = new Map<string, string[]>();
  /** The webhooks each secret signs, by its value (by its name when the vault could not be read). */
  const signed = new Map<string, Array<{ agent: string; webhook: string }>>();
  for (const definition of definitions) {
    const found: TriggerFindings = { errors: [], warnings: [] };
    const where = (index: number, field: string) => ({
      file: definition.file,
      field: `triggers[${index}].${field}`,
    });
    for (const [index, trigger] of definition.frontmatter.triggers.entries()) {
      if ("webhook" in trigger) {
        const value = await secretOf(options.vault, trigger.secret, found);
        const signer = typeof value === "string" ? `value:${value}` : `name:${trigger.secret}`;
        signed.set(signer, [
          ...(signed.get(signer) ?? []),
          { agent: definition.id, webhook: trigger.webhook },
        ]);
        if (value === null) {
          found.errors.push(
            new AgentdError(
              "SECRET_NOT_FOUND",
              `the vault has no secret "${trigger.secret}" for the webhook "${trigger.webhook}"`,
              {
                ...where(index, "secret"),
                hint: `printf %s "$SECRET" | agentd secrets set ${trigger.secret}; until then every delivery is refused (401)`,
              },
            ),
          );
        } else if (value !== undefined && trigger.signature === "standard" && !isStandardKey(value)) {
          found.errors.push(
            new AgentdError(
              "DEFINITION_INVALID",
              `the secret "${trigger.secret}" is not a Standard Webhooks key`,
              {
                ...where(index, "secret"),
                hint: "a Standard Webhooks secret is whsec_ followed by base64 (what the sender shows)",
              },
            ),
          );
        }
      } else if ("after" in trigger) {
        const upstream = trigger.after.agent;
        if (!options.agentIds.includes(upstream)) {
          const suggestion = didYouMean(upstream, options.agentIds);
          found.errors.push(
            new AgentdError(
              "DEFINITION_INVALID",
              `the after trigger follows an unknown agent "${upstream}"`,
              {
                ...where(index, "after.agent"),
                hint: suggestion ? `did you mean "${suggestion}"?` : "name the id of another agent file",
              },
            ),
          );
        }
        follows.set(definition.id, [...(follows.get(definition.id) ?? []), upstream]);
      } else {
        const problem = watchProblem(definition, trigger.watch.path, options.sandboxOf);
        if (problem !== undefined) {
          found.errors.push(
            new AgentdError(
              "DEFINITION_INVALID",
              `the watch trigger "${nameOf(trigger, index)}": ${problem}`,
              {
                ...where(index, "watch.path"),
                hint: "watch a folder that exists and that the agent's sandbox lets it read (relative paths are read from its workdir)",
              },
            ),
          );
        }
      }
    }
    findings.set(definition.id, found);
  }
  for (const definition of definitions) {
    for (const hook of ownHooksDeliveredTo(definition)) {
      findings
        .get(definition.id)
        ?.warnings.push(
          `${definition.id}: its webhook delivery posts to its own hook "${hook}": each run would start another, bounded only by the trigger's rate_limit`,
        );
    }
  }
  for (const [agent, cycle] of cyclesOf(follows)) {
    findings
      .get(agent)
      ?.warnings.push(
        `${agent}: after triggers form a cycle (${cycle.join(" → ")}): the daemon never starts the run that would close it`,
      );
  }
  for (const webhooks of signed.values()) {
    for (const webhook of webhooks) {
      const others = webhooks.filter((other) => other !== webhook);
      if (others.length === 0) continue;
      const named = others.map((other) => `"${other.webhook}" of ${other.agent}`).join(", ");
      findings
        .get(webhook.agent)
        ?.warnings.push(
          `the webhook "${webhook.webhook}" shares its secret with the webhook ${named}: a signature does not cover the URL, so a delivery captured at one also starts the other; give each webhook its own secret`,
        );
    }
  }
  return findings;
}

/**
 * The agent's own webhook triggers its `deliver:` webhooks post to (`…/hooks/<agent>/<name>` in a
 * URL written out; a `{{secret:…}}` URL or a config target cannot be read here).
 */
function ownHooksDeliveredTo(definition: AgentDefinition): string[] {
  const names = new Set(
    definition.frontmatter.triggers.flatMap((trigger) => ("webhook" in trigger ? [trigger.webhook] : [])),
  );
  if (names.size === 0) return [];
  const hooks = new Set<string>();
  for (const entry of definition.frontmatter.deliver) {
    if (typeof entry === "string" || entry.to !== "webhook") continue;
    let pathname: string;
    try {
      pathname = new URL(entry.url).pathname;
    } catch {
      continue;
    }
    const [, hooksPart, agent, name] = pathname.split("/");
    if (hooksPart === "hooks" && agent === definition.id && name !== undefined && names.has(name))
      hooks.add(name);
  }
  return [...hooks];
}

/** The secret's value; null when the vault has none; undefined when the vault cannot be read. */
async function secretOf(
  vault: Vault,
  name: string,
  found: TriggerFindings,
): Promise<string | null | undefined> {
  try {
    const value = await vault.get(name);
    return value === undefined || value === "" ? null : value;
  } catch (error) {
    found.warnings.push(
      `could not read the vault for the secret "${name}": ${error instanceof Error ? error.message : String(error)}`,
    );
    return undefined;
  }
}

function isStandardKey(secret: string): boolean {
  try {
    new Webhook(secret);
    return true;
  } catch {
    return false;
  }
}

function watchProblem(
  definition: AgentDefinition,
  folder: string,
  sandboxOf: (definition: AgentDefinition) => SandboxPolicy,
): string | undefined {
  const spelled = path.resolve(definition.workdir, folder);
  let real: string;
  try {
    real = realpathSync(spelled);
    if (!statSync(real).isDirectory()) return `${spelled} is not a folder`;
  } catch {
    return `the folder ${spelled} does not exist`;
  }
  try {
    if (fileAccessOf(sandboxOf(definition))(real) === "hidden")
      return `${real} is hidden from the agent by its sandbox`;
  } catch (error) {
    return `its sandbox cannot be set up: ${error instanceof Error ? error.message : String(error)}`;
  }
  return undefined;
}

/** Each agent on a cycle of `after` links, with the cycle from it back to it. */
function cyclesOf(follows: ReadonlyMap<string, readonly string[]>): Map<string, string[]> {
  const cycles = new Map<string, string[]>();
  for (const start of follows.keys()) {
    const seen = new Set<string>();
    const walk = (id: string, trail: string[]): string[] | undefined => {
      for (const next of follows.get(id) ?? []) {
        if (next === start) return [...trail, next];
        if (seen.has(next)) continue;
        seen.add(next);
        const found = walk(next, [...trail, next]);
        if (found) return found;
      }
      return undefined;
    };
    const cycle = walk(start, [start]);
    if (cycle) cycles.set(start, cycle);
  }
  return cycles;
}
