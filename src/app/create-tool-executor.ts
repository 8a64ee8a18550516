import type { ApprovalGate } from "../approvals/approval-gate.js";
import type { Config } from "../config/config-schema.js";
import { HookRunner } from "../hooks/hook-runner.js";
import type { Logger } from "../logging/logger.js";
import { McpToolSource } from "../mcp/mcp-tool-source.js";
import { SandboxHost } from "../sandbox/sandbox-host.js";
import type { SecretRedactor } from "../secrets/secret-redactor.js";
import type { Vault } from "../vault/vault.js";
import { askHumanTool } from "../questions/ask-human-tool.js";
import type { QuestionBroker } from "../questions/question-broker.js";
import { builtinTools } from "../tools/builtin/builtin-tools.js";
import { DefaultToolExecutor } from "../tools/default-tool-executor.js";
import { CompositeToolCatalog, type ToolSource } from "../tools/tool-catalog.js";
import type { ToolExecutor } from "../tools/tool-executor.js";

export interface ToolExecutorParts {
  /** Secrets already resolved: `mcp_servers` env and headers are used as they are. */
  config: Config;
  vault: Vault;
  redactor: SecretRedactor;
  approvals: ApprovalGate;
  logger: Logger;
  /** Where `ask_human` parks its questions; without it the tool is not offered. */
  questions?: QuestionBroker;
  /** The daemon's sandbox; default: one for `config` (without the config file's folder to hide). */
  sandbox?: SandboxHost;
  /** Tool sources beyond the built-ins and the MCP servers of config `mcp_servers`. */
  sources?: readonly ToolSource[];
}

/** A tool executor that owns MCP servers: `close()` ends every one it started. */
export interface ClosableToolExecutor extends ToolExecutor {
  close(): Promise<void>;
  /** The hook runner its tool calls use; workers run the `on_run_end` hooks with it. */
  readonly hooks: HookRunner;
}

/**
 * The tool executor of the daemon and of `agentd run`: built-in tools, the given sources, and the
 * MCP servers of config `mcp_servers` (started on first use). Close it when the daemon shuts down
 * or the run ends, so no MCP server process outlives them.
 */
export function createToolExecutor(parts: ToolExecutorParts): ClosableToolExecutor {
  const sandbox = parts.sandbox ?? new SandboxHost({ config: parts.config });
  const mcp = McpToolSource.fromConfig(parts.config, sandbox, parts.logger.child({ source: "mcp" }));
  const hooks = new HookRunner({
    sandbox,
    redactor: parts.redactor,
    logger: parts.logger.child({ source: "hooks" }),
  });
  const executor = new DefaultToolExecutor({
    catalog: new CompositeToolCatalog(
      [...builtinTools(), ...(parts.questions ? [askHumanTool(parts.questions)] : [])],
      [...(parts.sources ?? []), mcp],
    ),
    approvals: parts.approvals,
    vault: parts.vault,
    redactor: parts.redactor,
    settings: parts.config.tools,
    sandbox,
    logger: parts.logger,
    hooks,
  });
  return {
    hooks,
    specs: (definition, signal) => executor.specs(definition, signal),
    execute: (call, scope) => executor.execute(call, scope),
    close: () => mcp.close(),
  };
}
