import type { ApprovalGate } from "../approvals/approval-gate.js";
import type { Config } from "../config/config-schema.js";
import type { Logger } from "../logging/logger.js";
import type { SecretRedactor } from "../secrets/secret-redactor.js";
import type { Vault } from "../vault/vault.js";
import { builtinTools } from "./builtin/builtin-tools.js";
import { DefaultToolExecutor } from "./default-tool-executor.js";
import { CompositeToolCatalog, type ToolSource } from "./tool-catalog.js";

export interface ToolExecutorParts {
  config: Config;
  vault: Vault;
  redactor: SecretRedactor;
  approvals: ApprovalGate;
  logger: Logger;
  /** Tool sources beyond the built-ins (the MCP servers of config `mcp_servers`). */
  sources?: readonly ToolSource[];
}

/** The tool executor of the daemon and of `agentd run`: built-in tools plus the given sources. */
export function createToolExecutor(parts: ToolExecutorParts): DefaultToolExecutor {
  return new DefaultToolExecutor({
    catalog: new CompositeToolCatalog(builtinTools(), parts.sources ?? []),
    approvals: parts.approvals,
    vault: parts.vault,
    redactor: parts.redactor,
    settings: parts.config.tools,
    logger: parts.logger,
  });
}
