/**
 * Attribute names and values of the OpenTelemetry GenAI semantic conventions (semantic-conventions
 * v1.37–v1.40, "development" status; the names as @opentelemetry/semantic-conventions 1.45 lists
 * them), copied here rather than imported from its incubating entry point, as its README advises
 * for names that may still change. agentd's own attributes are under `agentd.`.
 */
export const GEN_AI_OPERATION_NAME = "gen_ai.operation.name";
export const GEN_AI_PROVIDER_NAME = "gen_ai.provider.name";
export const GEN_AI_AGENT_ID = "gen_ai.agent.id";
export const GEN_AI_AGENT_NAME = "gen_ai.agent.name";
export const GEN_AI_AGENT_DESCRIPTION = "gen_ai.agent.description";
export const GEN_AI_CONVERSATION_ID = "gen_ai.conversation.id";
export const GEN_AI_REQUEST_MODEL = "gen_ai.request.model";
export const GEN_AI_REQUEST_TEMPERATURE = "gen_ai.request.temperature";
export const GEN_AI_RESPONSE_MODEL = "gen_ai.response.model";
export const GEN_AI_RESPONSE_FINISH_REASONS = "gen_ai.response.finish_reasons";
export const GEN_AI_USAGE_INPUT_TOKENS = "gen_ai.usage.input_tokens";
export const GEN_AI_USAGE_OUTPUT_TOKENS = "gen_ai.usage.output_tokens";
export const GEN_AI_TOOL_NAME = "gen_ai.tool.name";
export const GEN_AI_TOOL_CALL_ID = "gen_ai.tool.call.id";
export const GEN_AI_TOOL_TYPE = "gen_ai.tool.type";
/** Opt-in content (telemetry.traces.content): JSON, masked. */
export const GEN_AI_INPUT_MESSAGES = "gen_ai.input.messages";
export const GEN_AI_OUTPUT_MESSAGES = "gen_ai.output.messages";
export const GEN_AI_TOOL_CALL_ARGUMENTS = "gen_ai.tool.call.arguments";
export const GEN_AI_TOOL_CALL_RESULT = "gen_ai.tool.call.result";
export const ERROR_TYPE = "error.type";
export const SERVER_ADDRESS = "server.address";
export const SERVER_PORT = "server.port";

/** Values of gen_ai.operation.name; each names its span: `<operation> <agent | model | tool>`. */
export const OPERATION_INVOKE_AGENT = "invoke_agent";
export const OPERATION_CHAT = "chat";
export const OPERATION_EXECUTE_TOOL = "execute_tool";

/** agentd's own attributes. */
export const AGENTD_RUN_ID = "agentd.run.id";
export const AGENTD_PARENT_RUN_ID = "agentd.run.parent_id";
export const AGENTD_RUN_TRIGGER = "agentd.run.trigger";
export const AGENTD_RUN_STATUS = "agentd.run.status";
export const AGENTD_RUN_REASON = "agentd.run.reason";
export const AGENTD_RUN_TASK = "agentd.run.task";
export const AGENTD_WORKER = "agentd.worker";
export const AGENTD_COST_USD = "agentd.cost_usd";
export const AGENTD_TOOL_OUTCOME = "agentd.tool.outcome";
export const AGENTD_CLI_TOOL = "agentd.cli.tool";
export const AGENTD_CLI_COMMAND = "agentd.cli.command";
