import { createHash } from "node:crypto";
import path from "node:path";
import type { Config } from "../config/config-schema.js";
import { resolveHooks } from "../hooks/resolved-hook.js";
import { AgentdError } from "../errors/agentd-error.js";
import type { ParsedPresetFile } from "../presets/parse-preset-file.js";
import { defaultWorkspacesRoot } from "../sandbox/sandbox-host.js";
import { mergeSandboxSettings } from "../config/sandbox-settings.js";
import { unsandboxedDescription } from "../sandbox/unsandboxed-warnings.js";
import { assembleSystemPrompt } from "../prompt/assemble-system-prompt.js";
import { didYouMean } from "../schema/known-keys.js";
import type { AgentDefinition } from "./agent-definition.js";
import { applyCapabilities } from "./apply-capabilities.js";
import { checkSandboxBinds } from "./check-sandbox-binds.js";
import { checkSandboxConsent } from "./check-sandbox-consent.js";
import { ignoredSandboxLimits, ignoredSandboxLimitWarning } from "./ignored-sandbox-limits.js";
import type { AgentFrontmatter } from "./agent-schema.js";
import type { ParsedAgentFile } from "./parse-agent-file.js";
import { BUILTIN_TOOL_NAMES, RUN_TOOL_NAMES } from "../tools/builtin/builtin-tool-names.js";
import { checkCliFlags } from "../config/cli-flags.js";
import { cliRuleWarnings } from "../workers/cli/cli-rule-warnings.js";
import { parseMcpToolName } from "../mcp/mcp-tool-name.js";
import { resolveModel } from "./resolve-model.js";
import { declaresNotify, deliveryReferenceProblems } from "../config/delivery-settings.js";
import { withMemoryTools } from "../memory/agent-memory.js";
import { retentionOf } from "../config/retention-policy.js";
import { configuredRetention, retentionOverrideOf } from "../config/retention-settings.js";

/** CLI tools agentd knows without a `cli_tools` entry in the config. */
export const BUILT_IN_CLI_TOOLS = ["claude", "gemini", "codex"] as const;

/**
 * Turns a parsed agent file and its resolved preset chain (the agent's own preset first) into the
 * definition runs use, merged over the config's defaults. Returns the errors instead when the
 * agent refers to something the config does not have (a CLI tool, an MCP server).
 */
export function buildAgentDefinition(
  agent: ParsedAgentFile & { frontmatter: AgentFrontmatter },
  presets: readonly ParsedPresetFile[],
  config: Config,
): AgentDefinition | AgentdError[] {
  const warnings = [...agent.warnings];
  const frontmatter = withConfiguredTools(agent, config, warnings);
  const errors = checkConfigReferences({ ...agent, frontmatter }, config);
  const consentError =
    checkSandboxConsent({ ...agent, frontmatter }, config) ??
    checkSandboxBinds({ ...agent, frontmatter }, config);
  if (consentError) errors.unshift(consentError);
  if (errors.length > 0) return errors;
  const model = resolveModel(frontmatter.model, agent.dialect, config);
  if (model.warning) warnings.push(`${whereIs(agent, ["model"])} model: ${model.warning}`);
  if (frontmatter.worker === "llm" && frontmatter.cli) {
    warnings.push(`${agent.file} cli: the cli section is ignored with worker: llm`);
  }
  warnings.push(...cliRuleWarnings(frontmatter, config).map((warning) => `${agent.file} ${warning}`));
  const project = path.dirname(config.agents_dir);
  const capabilities = applyCapabilities(
    frontmatter.capabilities,
    frontmatter,
    mergeSandboxSettings(config.sandbox, frontmatter.sandbox, project),
  );
  // Only what the file itself lists is worth a warning (not the tools a foreign file implies). Asked
  // only when there is a warning: a line costs parsing the frontmatter again.
  const fileLists = () => agent.lineOf(["tools"]) !== undefined || agent.lineOf(["agents"]) !== undefined;
  if (capabilities.warnings.length > 0 && fileLists()) {
    warnings.push(
      ...capabilities.warnings.map((warning) => `${whereIs(agent, ["capabilities"])} ${warning}`),
    );
  }
  const { sandbox } = capabilities;
  const unsandboxed = unsandboxedDescription(sandbox);
  if (unsandboxed !== undefined) warnings.push(`${whereIs(agent, ["sandbox"])} ${unsandboxed}`);
  for (const limit of ignoredSandboxLimits(frontmatter.sandbox, config.sandbox.limits)) {
    const where = whereIs(agent, ["sandbox", "limits", limit.key]);
    warnings.push(`${where} ${ignoredSandboxLimitWarning(limit)}`);
  }
  const name = frontmatter.name ?? agent.id;
  const definedLimits = Object.entries(frontmatter.limits ?? {}).filter(([, value]) => value !== undefined);
  const definedApprovals = Object.entries(frontmatter.approvals ?? {}).filter(
    ([, value]) => value !== undefined,
  );
  return {
    id: agent.id,
    file: agent.file,
    hash: contentHash(agent, presets),
    name,
    description: frontmatter.description,
    frontmatter: {
      ...frontmatter,
      tools: withMemoryTools(capabilities.tools, frontmatter.memory, frontmatter.capabilities),
      agents: capabilities.agents,
      fallback_models: fallbackModels(agent, config, warnings),
    },
    instructions: agent.instructions,
    presetChain: presets.map((preset) => preset.name),
    systemPrompt: assembleSystemPrompt({
      agentName: name,
      instructions: agent.instructions,
      presets: presets.flatMap((preset) => (preset.preset ? [preset.preset] : [])).reverse(),
    }),
    limits: { ...config.limits, ...Object.fromEntries(definedLimits) },
    permissions: {
      allow: [...config.permissions.allow, ...(frontmatter.permissions?.allow ?? [])],
      ask: [...config.permissions.ask, ...(frontmatter.permissions?.ask ?? [])],
      deny: [...config.permissions.deny, ...(frontmatter.permissions?.deny ?? [])],
    },
    approvals: { ...config.approvals, ...Object.fromEntries(definedApprovals) },
    // Relative workdirs are relative to the project folder: the parent of agents/. The default
    // lies outside data_dir, which the sandbox hides (it holds the vault).
    workdir: frontmatter.workdir
      ? path.resolve(project, frontmatter.workdir)
      : path.join(defaultWorkspacesRoot(config), agent.id),
    sandbox,
    model: model.model,
    resume: frontmatter.resume ?? config.resume,
    retention: retentionOf(configuredRetention(config.retention), retentionOverrideOf(frontmatter.retention)),
    hooks: resolveHooks(config.hooks, frontmatter.hooks),
    capabilities: frontmatter.capabilities,
    ...(declaresNotify(frontmatter.deliver, config.deliveries) ? { offersNotify: true } : {}),
    warnings,
  };
}

/**
 * A Claude Code or opencode file may name MCP tools of servers this daemon does not configure
 * (`mcp__github__get_issue`): those tools are left out with a warning, so the agent still loads.
 * In agentd's own files such a tool is an error (checkConfigReferences).
 */
function withConfiguredTools(
  agent: ParsedAgentFile & { frontmatter: AgentFrontmatter },
  config: Config,
  warnings: string[],
): AgentFrontmatter {
  const { frontmatter } = agent;
  if (agent.dialect === "agentd") return frontmatter;
  const unconfigured = frontmatter.tools.filter((tool) => {
    const server = parseMcpToolName(tool)?.server;
    return server !== undefined && !(server in config.mcp_servers);
  });
  if (unconfigured.length === 0) return frontmatter;
  warnings.push(
    `${whereIs(agent, ["tools"])} tools: left out, their MCP servers are not in config mcp_servers: ${unconfigured.join(", ")}`,
  );
  return { ...frontmatter, tools: frontmatter.tools.filter((tool) => !unconfigured.includes(tool)) };
}

/**
 * `fallback_models` through `llm.model_aliases`. A Claude Code or opencode name without an alias is
 * left out with a warning, never sent as is.
 */
function fallbackModels(
  agent: ParsedAgentFile & { frontmatter: AgentFrontmatter },
  config: Config,
  warnings: string[],
): string[] {
  const models: string[] = [];
  const unmapped: string[] = [];
  for (const name of agent.frontmatter.fallback_models) {
    const resolved = resolveModel(name, agent.dialect, config);
    if (resolved.warning) unmapped.push(name);
    else models.push(resolved.model);
  }
  if (unmapped.length > 0) {
    warnings.push(
      `${whereIs(agent, ["fallback_models"])} fallback_models: left out, no entry in llm.model_aliases: ${unmapped.join(", ")}`,
    );
  }
  return models;
}

/** `file:line` of a frontmatter key, or the file alone. */
function whereIs(agent: ParsedAgentFile, pathInFile: PropertyKey[]): string {
  const line = agent.lineOf(pathInFile);
  return line === undefined ? agent.file : `${agent.file}:${line}`;
}

/** sha256 of the agent file's bytes followed by each preset file's bytes along the chain. */
function contentHash(agent: ParsedAgentFile, presets: readonly ParsedPresetFile[]): string {
  const hash = createHash("sha256").update(agent.bytes);
  for (const preset of presets) hash.update(preset.bytes);
  return hash.digest("hex");
}

function checkConfigReferences(agent: ParsedAgentFile & { frontmatter: AgentFrontmatter }, config: Config) {
  const errors: AgentdError[] = [];
  const { frontmatter } = agent;
  const located = (field: string, pathInFile: PropertyKey[]) => {
    const line = agent.lineOf(pathInFile);
    return { file: agent.file, field, ...(line === undefined ? {} : { line }) };
  };
  const tool = frontmatter.cli?.tool;
  const cliTools = [...BUILT_IN_CLI_TOOLS, ...Object.keys(config.cli_tools)];
  if (frontmatter.worker === "cli" && tool !== undefined && !cliTools.includes(tool)) {
    const suggestion = didYouMean(tool, cliTools);
    errors.push(
      new AgentdError("DEFINITION_INVALID", `unknown CLI tool "${tool}"`, {
        ...located("cli.tool", ["cli", "tool"]),
        hint: suggestion
          ? `did you mean "${suggestion}"? Otherwise add cli_tools.${tool} to the config`
          : `use ${cliTools.join(", ")}, or add cli_tools.${tool} to the config`,
      }),
    );
  }
  if (frontmatter.worker === "cli" && tool !== undefined) {
    for (const problem of checkCliFlags(tool, frontmatter.cli?.args ?? [])) {
      errors.push(
        new AgentdError("DEFINITION_INVALID", problem.message, {
          ...located(`cli.args[${problem.index}]`, ["cli", "args", problem.index]),
          hint: `see \`${tool} --help\`; the options agentd sets itself are listed in docs/cli-workers.md`,
        }),
      );
    }
  }
  frontmatter.tools.forEach((toolName, index) => {
    const server = /^mcp:([^/]+)\//.exec(toolName)?.[1];
    const knownTools: readonly string[] = [...BUILTIN_TOOL_NAMES, ...RUN_TOOL_NAMES];
    if (server === undefined && !knownTools.includes(toolName)) {
      const suggestion = didYouMean(toolName, knownTools);
      errors.push(
        new AgentdError("DEFINITION_INVALID", `unknown tool "${toolName}"`, {
          ...located(`tools[${index}]`, ["tools", index]),
          hint: suggestion
            ? `did you mean "${suggestion}"?`
            : `use ${knownTools.join(", ")}, or an MCP tool as "mcp:<server>/<tool>"`,
        }),
      );
      return;
    }
    if (server === undefined || server in config.mcp_servers) return;
    const configured = Object.keys(config.mcp_servers);
    const suggestion = didYouMean(server, configured);
    errors.push(
      new AgentdError("DEFINITION_INVALID", `MCP server "${server}" is not configured`, {
        ...located(`tools[${index}]`, ["tools", index]),
        hint: suggestion
          ? `did you mean "${suggestion}" (mcp:${suggestion}/…)? Otherwise add mcp_servers.${server} to the config`
          : `add mcp_servers.${server} to the config, or remove the tool${configured.length > 0 ? ` (configured: ${configured.join(", ")})` : ""}`,
      }),
    );
  });
  for (const problem of deliveryReferenceProblems(frontmatter.deliver, config.deliveries)) {
    const where = located(`deliver[${problem.index}]`, ["deliver", problem.index]);
    errors.push(new AgentdError("DEFINITION_INVALID", problem.message, { ...where, hint: problem.hint }));
  }
  return errors;
}
