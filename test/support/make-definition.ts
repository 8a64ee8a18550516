import { createHash } from "node:crypto";
import { LimitsSchema } from "../../src/config/config-schema.js";
import type { Limits } from "../../src/config/config-schema.js";
import type { AgentDefinition } from "../../src/definitions/agent-definition.js";
import { AgentFrontmatterSchema } from "../../src/definitions/agent-schema.js";
import { ConfigHooksSchema } from "../../src/config/hook-settings.js";
import { resolveHooks } from "../../src/hooks/resolved-hook.js";
import { SandboxSettingsSchema, mergeSandboxSettings } from "../../src/config/sandbox-settings.js";
import { DEFAULT_RETENTION, retentionOf } from "../../src/config/retention-policy.js";
import { retentionOverrideOf } from "../../src/config/retention-settings.js";

/** What a test may set on the definition it builds; everything else takes the defaults. */
export interface MakeDefinitionOptions {
  id?: string;
  /** Raw frontmatter, validated by the real schema (description defaults to a test line). */
  frontmatter?: Record<string, unknown>;
  systemPrompt?: string;
  instructions?: string;
  /** Overrides of the resolved limits (after config defaults and frontmatter `limits`). */
  limits?: Partial<Limits>;
  model?: string;
  workdir?: string;
  file?: string;
}

/**
 * A valid, resolved AgentDefinition for tests, built the way the definition loader would: the
 * frontmatter goes through the real schema, limits are config defaults overlaid with the agent's.
 */
export function makeDefinition(options: MakeDefinitionOptions = {}): AgentDefinition {
  const id = options.id ?? "test-agent";
  const frontmatter = AgentFrontmatterSchema.parse({
    description: `test agent ${id}`,
    ...options.frontmatter,
  });
  const instructions = options.instructions ?? "You are a test agent. Do the task.";
  const limits = { ...LimitsSchema.parse({}), ...frontmatter.limits, ...options.limits };
  return {
    id,
    file: options.file ?? `/agents/${id}.md`,
    resume: frontmatter.resume ?? false,
    retention: retentionOf(DEFAULT_RETENTION, retentionOverrideOf(frontmatter.retention)),
    // Like the loader's hash: two builds differ when their frontmatter or instructions differ.
    hash: `sha256-${createHash("sha256")
      .update(JSON.stringify([id, options.frontmatter, instructions]))
      .digest("hex")}`,
    name: frontmatter.name ?? id,
    description: frontmatter.description,
    frontmatter,
    instructions,
    presetChain: frontmatter.preset ? [frontmatter.preset] : [],
    systemPrompt: options.systemPrompt ?? instructions,
    limits,
    permissions: {
      allow: frontmatter.permissions?.allow ?? [],
      ask: frontmatter.permissions?.ask ?? [],
      deny: frontmatter.permissions?.deny ?? [],
    },
    approvals: {
      timeout: frontmatter.approvals?.timeout ?? 600_000,
      on_timeout: frontmatter.approvals?.on_timeout ?? "deny",
    },
    workdir: options.workdir ?? process.cwd(),
    model: options.model ?? frontmatter.model ?? "test-model",
    sandbox: mergeSandboxSettings(SandboxSettingsSchema.parse({}), frontmatter.sandbox, process.cwd()),
    hooks: resolveHooks(ConfigHooksSchema.parse({}), frontmatter.hooks),
    capabilities: frontmatter.capabilities,
    warnings: [],
  };
}
