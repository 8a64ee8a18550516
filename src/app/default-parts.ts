import type { ApprovalsService } from "../api/api-services.js";
import type { Config } from "../config/config-schema.js";
import type { AgentDefinition } from "../definitions/agent-definition.js";
import { AgentdError } from "../errors/agentd-error.js";
import type { Worker } from "../workers/worker.js";

/**
 * The worker for a definition: the LLM worker, or the CLI worker with LLM fallback.
 * TODO(integration): wire LlmWorker (src/workers/llm/) and the CLI worker (src/workers/cli/) here
 * once they land; until then a run fails at once with a clear error instead of hanging.
 */
export function defaultWorkerFor(config: Config): (definition: AgentDefinition) => Worker {
  void config;
  return () => ({
    run: async () => {
      throw new AgentdError("INTERNAL", "no worker is built into this daemon yet", {
        hint: "this build of agentd lacks the LLM and CLI workers",
      });
    },
  });
}

/** TODO(integration): the ApprovalBroker (src/approvals/) once it lands. */
export function noApprovals(): ApprovalsService {
  return {
    list: () => [],
    decide: (id) => {
      throw new AgentdError("APPROVAL_NOT_FOUND", `no pending approval "${id}"`);
    },
  };
}
