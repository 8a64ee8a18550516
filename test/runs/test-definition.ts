import { LimitsSchema } from "../../src/config/config-schema.js";
import type { AgentDefinition } from "../../src/definitions/agent-definition.js";
import { AgentFrontmatterSchema } from "../../src/definitions/agent-schema.js";
import { ConfigHooksSchema } from "../../src/hooks/hook-settings.js";
import { resolveHooks } from "../../src/hooks/resolved-hook.js";
import { SandboxSettingsSchema, mergeSandboxSettings } from "../../src/sandbox/sandbox-settings.js";

/** A valid AgentDefinition built from frontmatter the way the registry would, for unit tests. */
export function testDefinition(id: string, frontmatter: Record<string, unknown> = {}): AgentDefinition {
  const parsed = AgentFrontmatterSchema.parse({ description: `test agent ${id}`, ...frontmatter });
  const limits = LimitsSchema.parse({});
  return {
    id,
    file: `/agents/${id}.md`,
    resume: parsed.resume ?? false,
    hash: `hash-of-${id}-${JSON.stringify(frontmatter).length}`,
    name: parsed.name ?? id,
    description: parsed.description,
    frontmatter: parsed,
    instructions: "Do the task.",
    presetChain: [],
    systemPrompt: "Do the task.",
    limits: { ...limits, ...parsed.limits },
    permissions: { allow: [], ask: [], deny: [] },
    approvals: { timeout: 600_000, on_timeout: "deny" },
    workdir: "/tmp",
    model: "test-model",
    sandbox: mergeSandboxSettings(SandboxSettingsSchema.parse({}), parsed.sandbox, process.cwd()),
    hooks: resolveHooks(ConfigHooksSchema.parse({}), parsed.hooks),
    capabilities: parsed.capabilities,
    warnings: [],
  };
}
