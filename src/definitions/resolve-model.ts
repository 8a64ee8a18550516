import type { Config } from "../config/config-schema.js";
import type { AgentDialect } from "./foreign/foreign-translation.js";

export interface ResolvedModel {
  model: string;
  /** Set when a foreign model name had no alias: the agent falls back to `llm.model`. */
  warning?: string;
}

/**
 * The model sent to the endpoint for a name written in an agent file: `llm.model_aliases` first,
 * `inherit` is `llm.model`. A Claude Code or opencode name without an alias (`sonnet`,
 * `anthropic/claude-sonnet-4`) is never sent as is: the agent uses `llm.model` and is warned.
 */
export function resolveModel(
  written: string | undefined,
  dialect: AgentDialect,
  config: Config,
): ResolvedModel {
  if (written === undefined) return { model: config.llm.model };
  const alias = config.llm.model_aliases[written];
  if (alias !== undefined) return { model: alias };
  if (written === "inherit") return { model: config.llm.model };
  if (dialect === "agentd") return { model: written };
  return {
    model: config.llm.model,
    warning: `model "${written}" has no entry in llm.model_aliases: the agent uses llm.model (${config.llm.model}); add llm.model_aliases: { ${JSON.stringify(written)}: <model> } to the config`,
  };
}
