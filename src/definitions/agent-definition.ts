import type { ApprovalPolicy, Limits, PermissionRules } from "../config/config-schema.js";
import type { RetentionPolicy } from "../config/retention-policy.js";
import type { ResolvedHook } from "../hooks/resolved-hook.js";
import type { SandboxSettings } from "../config/sandbox-settings.js";
import type { AgentFrontmatter, CapabilityMode } from "./agent-schema.js";

/**
 * A valid agent as the registry serves it: frontmatter merged with config defaults, preset chain
 * resolved, system prompt assembled. Immutable: a run keeps the one it started with.
 */
export interface AgentDefinition {
  id: string;
  /** Absolute path of the Markdown file. */
  file: string;
  /** sha256 of the agent file and every preset in its chain: changes when any of them does. */
  hash: string;
  name: string;
  description: string;
  frontmatter: AgentFrontmatter;
  /** The Markdown body. */
  instructions: string;
  /** Preset names from the agent's own to the root of its `extends` chain. */
  presetChain: string[];
  systemPrompt: string;
  /** Agent limits over config `limits`. */
  limits: Limits;
  /** Config `permissions` followed by the agent's own rules. */
  permissions: PermissionRules;
  approvals: ApprovalPolicy;
  /** Absolute working directory for tools and CLI workers. */
  workdir: string;
  /** Config `sandbox` with the agent's `sandbox:` over it; paths absolute. */
  sandbox: SandboxSettings;
  /** Model for the LLM worker: agent `model`, else config `llm.model`. */
  model: string;
  warnings: string[];
  /** Agent `resume`, else config `resume`: resumed at start after a crash or shutdown. */
  resume: boolean;
  /** Config `retention` with the agent's `retention:` keys over it. */
  retention: RetentionPolicy;
  /** Config `hooks` for every point, then the agent's own. */
  hooks: ResolvedHook[];
  /** A `deliver:` target has `when: agent`: the `notify` tool is offered (src/deliveries/). */
  offersNotify?: boolean;
  /** Frontmatter `capabilities`: the tools and the sandbox above are already narrowed to it. */
  capabilities: CapabilityMode;
}
