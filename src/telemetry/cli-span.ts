import type { Attributes } from "@opentelemetry/api";
import * as names from "./genai-attributes.js";

/** The attributes of a CLI worker's `invoke_agent <tool>` span: the CLI is an agent of its own. */
export function cliSpanAttributes(tool: string, model: string | undefined): Attributes {
  return {
    [names.GEN_AI_OPERATION_NAME]: names.OPERATION_INVOKE_AGENT,
    [names.GEN_AI_AGENT_NAME]: tool,
    [names.AGENTD_CLI_TOOL]: tool,
    ...(model === undefined ? {} : { [names.GEN_AI_REQUEST_MODEL]: model }),
  };
}
