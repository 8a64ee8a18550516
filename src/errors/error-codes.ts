/**
 * Every error agentd reports carries one of these codes. The API and the CLI print the same codes,
 * so a user can search for one in docs/ and in logs (src/errors/error-hints.ts: what to do about each).
 */
export const ERROR_CODES = [
  // configuration and definitions
  "CONFIG_INVALID",
  "CONFIG_NOT_FOUND",
  "DEFINITION_INVALID",
  "DEFINITION_DUPLICATE_ID",
  "PRESET_INVALID",
  "PRESET_NOT_FOUND",
  "PRESET_CYCLE",
  // usage
  "USAGE",
  "NOT_FOUND",
  "CONFLICT",
  // an agent turned off (agentd disable, or enabled: false in its file)
  "AGENT_DISABLED",
  "BAD_REQUEST",
  "UNAUTHORIZED",
  "FORBIDDEN_ROLE",
  "HOST_NOT_ALLOWED",
  "ORIGIN_NOT_ALLOWED",
  "UNSUPPORTED_MEDIA_TYPE",
  "HEADERS_TOO_LARGE",
  // webhook triggers: a body past the bound, a trigger past its rate limit
  "PAYLOAD_TOO_LARGE",
  "RATE_LIMITED",
  // llm
  "LLM_TIMEOUT",
  "LLM_HTTP",
  "LLM_NETWORK",
  "LLM_BAD_RESPONSE",
  "LLM_CIRCUIT_OPEN",
  // runs
  "RUN_ABORTED",
  "BUDGET_EXCEEDED",
  "LOOP_DETECTED",
  "MAX_ITERATIONS",
  // tools, permissions, secrets
  "TOOL_NOT_FOUND",
  "TOOL_BAD_ARGUMENTS",
  "TOOL_FAILED",
  "TOOL_DENIED",
  "TOOL_TIMEOUT",
  "PATH_ESCAPE",
  "SECRET_NOT_FOUND",
  "SECRET_NOT_ALLOWED",
  "VAULT_UNAVAILABLE",
  "VAULT_CORRUPT",
  "APPROVAL_NOT_FOUND",
  "MCP_UNAVAILABLE",
  // agents together: sub-agents, questions, checkpoints, hooks
  "AGENT_DEPTH_EXCEEDED",
  "QUESTION_NOT_FOUND",
  "TOOL_INTERRUPTED",
  "HOOK_FAILED",
  "DELIVERY_FAILED",
  // sandbox
  "SANDBOX_UNAVAILABLE",
  "SANDBOX_OFF_NOT_ALLOWED",
  "HOST_NOT_ALLOWED",
  // cli workers
  "CLI_NOT_INSTALLED",
  "CLI_AUTH",
  "CLI_QUOTA",
  "CLI_RATE_LIMIT",
  "CLI_NETWORK",
  "CLI_TIMEOUT",
  "CLI_HUNG",
  "CLI_CRASH",
  "CLI_NO_RESULT",
  "CLI_COOLDOWN",
  "CLI_PERMISSION_DENIED",
  // daemon
  "STORE_CORRUPT",
  "STORE_WRITE_FAILED",
  "STORE_UNAVAILABLE",
  "STORAGE_FULL",
  "DAEMON_UNREACHABLE",
  "NODE_UNREACHABLE",
  "ADDRESS_IN_USE",
  "DATA_DIR_LOCKED",
  "SHUTTING_DOWN",
  "INTERNAL",
] as const;

export type ErrorCode = (typeof ERROR_CODES)[number];
