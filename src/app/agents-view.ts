import type { AgentDetail, AgentSummary, AgentsService, ResolvedHookView } from "../api/api-services.js";
import type { AgentDefinition } from "../definitions/agent-definition.js";
import type { AgentStatus, DefinitionSnapshot } from "../definitions/definition-snapshot.js";
import { HOOK_POINTS, type HookPoint } from "../config/hook-settings.js";
import type { RunRecord } from "../run-vocabulary/run-record.js";
import type { SandboxView } from "../sandbox/sandbox-view.js";
import { isUnsandboxed } from "../sandbox/unsandboxed-warnings.js";
import { visitStrings } from "../secrets/secret-template.js";
import { switchNoteOf } from "./switched-definitions.js";

export interface AgentsViewSources {
  /** The absolute agents folder. */
  directory?: string;
  snapshot: () => DefinitionSnapshot;
  nextFire: (agentId: string) => Date | undefined;
  lastRun: (agentId: string) => RunRecord | undefined;
  /** What a definition's sandboxed children see; absent: no view (null). */
  sandboxView?: (definition: AgentDefinition) => SandboxView | null;
  /**
   * Masks vault values in every text shown (any `read` token sees them): the description, prompt,
   * hook commands, permission patterns, the errors and warnings that quote an agent file.
   */
  redact?: (text: string) => string;
}

/** `GET /agents` and `GET /agents/:id`: the registry's snapshot with next fire times and last runs. */
export function createAgentsView(sources: AgentsViewSources): AgentsService {
  const { redact } = sources;
  const masked = <Value>(value: Value): Value => (redact === undefined ? value : visitStrings(value, redact));
  const summarize = (status: AgentStatus, snapshot: DefinitionSnapshot): AgentSummary => {
    const definition = status.valid ? status.definition : (status.definition ?? snapshot.get(status.id));
    return summaryOf(status, definition, sources);
  };
  return {
    ...(sources.directory === undefined ? {} : { directory: sources.directory }),
    list: () => {
      const snapshot = sources.snapshot();
      return masked(snapshot.agents.map((status) => summarize(status, snapshot)));
    },
    get: (id) => {
      const snapshot = sources.snapshot();
      const statuses = snapshot.agents.filter((status) => status.id === id);
      const [first] = statuses;
      if (!first) return undefined;
      const definition = snapshot.get(id);
      const summary = summaryOf(
        {
          ...first,
          valid: statuses.every((status) => status.valid),
          errors: statuses.flatMap((status) => status.errors),
        },
        definition,
        sources,
      );
      return masked({
        ...summary,
        file: first.file,
        sandbox_view: definition ? (sources.sandboxView?.(definition) ?? null) : null,
        definition: definition ? resolvedDefinition(definition) : null,
      });
    },
  };
}

function summaryOf(
  status: AgentStatus,
  definition: AgentDefinition | undefined,
  sources: AgentsViewSources,
): AgentSummary {
  const frontmatter = definition?.frontmatter;
  const schedule = frontmatter?.schedule;
  const lastRun = sources.lastRun(status.id);
  return {
    id: status.id,
    name: definition?.name ?? status.id,
    description: definition?.description ?? "",
    valid: status.valid,
    errors: status.errors.map((error) => error.describe()),
    error_details: status.errors.map((error) => error.toJSON()),
    warnings: status.warnings,
    worker: frontmatter?.worker === "cli" ? `cli:${frontmatter.cli?.tool ?? "unknown"}` : "llm",
    schedule: schedule ? { cron: schedule.cron, timezone: schedule.timezone ?? null } : null,
    next_fire: sources.nextFire(status.id)?.toISOString() ?? null,
    enabled: frontmatter?.enabled ?? false,
    switched_off: (definition && switchNoteOf(definition)) ?? null,
    unsandboxed: definition !== undefined && isUnsandboxed(definition.sandbox),
    last_run: lastRun
      ? {
          id: lastRun.id,
          status: lastRun.status,
          reason: lastRun.reason ?? null,
          created_at: lastRun.created_at,
          started_at: lastRun.started_at ?? null,
          ended_at: lastRun.ended_at ?? null,
          cost_usd: lastRun.cost_usd,
        }
      : null,
  };
}

function resolvedDefinition(definition: AgentDefinition): NonNullable<AgentDetail["definition"]> {
  const { frontmatter, limits, permissions } = definition;
  return {
    system_prompt: definition.systemPrompt,
    model: definition.model,
    fallback_models: frontmatter.fallback_models,
    tools: frontmatter.tools,
    permissions: { allow: permissions.allow, ask: permissions.ask, deny: permissions.deny },
    limits: { ...limits },
    secrets: frontmatter.secrets,
    preset_chain: definition.presetChain,
    hash: definition.hash,
    capabilities: definition.capabilities,
    sandbox_mode: definition.sandbox.mode,
    hooks: Object.fromEntries(
      HOOK_POINTS.map((point) => [
        point,
        definition.hooks
          .filter((hook) => hook.point === point)
          .map((hook) => ({
            command: hook.command,
            timeout_ms: hook.timeout,
            source: hook.source,
            ...(hook.tools === undefined ? {} : { tools: hook.tools }),
          })),
      ]),
    ) as Record<HookPoint, ResolvedHookView[]>,
  };
}
