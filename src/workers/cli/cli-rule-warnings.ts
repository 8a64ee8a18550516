import type { Config } from "../../config/config-schema.js";
import type { AgentFrontmatter } from "../../definitions/agent-schema.js";
import { cliToolRules } from "./cli-tool-rules.js";

/**
 * What of an agent's rules its CLI cannot carry, as validation warnings naming the field: agentd
 * passes `tools`, `permissions` and `max_iterations` to a CLI only where it has flags for them,
 * and enforces `max_cost_usd` itself only from a cost it can know (reported, or priced in
 * `llm.prices`). Fields the agent leaves to the defaults are not reported.
 */
export function cliRuleWarnings(frontmatter: AgentFrontmatter, config: Config): string[] {
  const settings = frontmatter.cli;
  if (frontmatter.worker !== "cli" || !settings) return [];
  // The adapter itself (its output parsers) is not loaded to check an agent file.
  const rules = cliToolRules(settings.tool, config.cli_tools);
  if (!rules) return [];
  const { tool, ruleSupport } = rules;
  const warnings: string[] = [];
  const permissions = frontmatter.permissions;
  const ownRules = [...(permissions?.allow ?? []), ...(permissions?.ask ?? []), ...(permissions?.deny ?? [])];
  if (frontmatter.tools.length > 0 && !ruleSupport.tools) {
    warnings.push(
      `tools: ${tool} has no switch to limit its own tools; the list applies to the LLM fallback only`,
    );
  }
  if (ownRules.length > 0 && !ruleSupport.permissions) {
    warnings.push(
      `permissions: ${tool} has no allow/deny rules agentd can pass; they apply to the LLM fallback only (agentd's sandbox still contains the CLI)`,
    );
  }
  if ((permissions?.ask ?? []).length > 0 && ruleSupport.permissions) {
    warnings.push(
      `permissions.ask: ${tool} runs headless and cannot ask; it refuses the calls these rules name`,
    );
  }
  const limits = frontmatter.limits;
  if (limits?.max_iterations !== undefined && !ruleSupport.maxIterations) {
    warnings.push(
      `limits.max_iterations: ${tool} has no turn limit agentd can set; only timeout and budgets bound it`,
    );
  }
  const model = settings.model ?? rules.defaultModel;
  const priced = model !== undefined && Object.hasOwn(config.llm.prices, model);
  if (limits?.max_cost_usd !== undefined && !ruleSupport.reportsCost && !priced) {
    warnings.push(
      `limits.max_cost_usd: ${tool} reports no cost and llm.prices has no price for its model "${model ?? "(none)"}", so the cap cannot be enforced; add llm.prices.${model ?? "<model>"}`,
    );
  }
  return warnings;
}
