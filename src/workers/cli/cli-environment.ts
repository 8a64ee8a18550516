import { allowedVariables } from "../../secrets/child-environment.js";

/**
 * What every CLI worker gets from the daemon, the generic ones from config `cli_tools` included:
 * who and where it is (HOME, USER, LOGNAME, SHELL, PATH), language and terminal (LANG, LANGUAGE,
 * LC_*, TERM, TZ), where its config and caches go (XDG_CONFIG_HOME, XDG_CACHE_HOME, XDG_DATA_HOME,
 * XDG_STATE_HOME) and which certificates it trusts (SSL_CERT_FILE, SSL_CERT_DIR,
 * NODE_EXTRA_CA_CERTS, for a TLS-intercepting proxy). Paths and settings only, no credentials.
 * TMPDIR, TMP and TEMP are the run's own folder, set by agentd.
 */
const BASE_VARIABLE =
  /^(HOME|USER|LOGNAME|SHELL|PATH|LANG|LANGUAGE|LC_[A-Z_]+|TERM|TZ|XDG_(CONFIG|CACHE|DATA|STATE)_HOME|SSL_CERT_FILE|SSL_CERT_DIR|NODE_EXTRA_CA_CERTS)$/;

/**
 * A built-in CLI's own variables: its account, API key, endpoint and settings, as its own
 * documentation names them. Anything else it needs (AWS_* for Claude Code on Bedrock, the key a
 * Codex provider's `env_key` names, a host proxy's HTTPS_PROXY) goes in `cli_tools.<tool>.env`.
 */
const TOOL_VARIABLES: Record<string, RegExp> = {
  // ANTHROPIC_API_KEY, _AUTH_TOKEN, _BASE_URL, _MODEL…; CLAUDE_CONFIG_DIR, CLAUDE_CODE_*; its
  // documented switches for updates, telemetry and error reports.
  claude: /^(ANTHROPIC_[A-Z0-9_]+|CLAUDE_[A-Z0-9_]+|DISABLE_(AUTOUPDATER|TELEMETRY|ERROR_REPORTING))$/,
  // GEMINI_API_KEY, GEMINI_CLI_HOME…; GOOGLE_API_KEY, GOOGLE_CLOUD_PROJECT, GOOGLE_GEMINI_BASE_URL,
  // GOOGLE_GENAI_USE_VERTEXAI, GOOGLE_APPLICATION_CREDENTIALS…
  gemini: /^(GEMINI_[A-Z0-9_]+|GOOGLE_[A-Z0-9_]+)$/,
  // OPENAI_API_KEY, OPENAI_BASE_URL…; CODEX_HOME…
  codex: /^(OPENAI_[A-Z0-9_]+|CODEX_[A-Z0-9_]+)$/,
};

/**
 * The daemon's variables a CLI worker starts from: the common base, and for claude, gemini and
 * codex their own variables too (see docs/cli-workers.md). Nothing else of the daemon's
 * environment; the tool's configured `env` and agentd's own variables go over it.
 */
export function cliEnvironment(
  tool: string,
  environment: NodeJS.ProcessEnv = process.env,
): Record<string, string> {
  const own = Object.hasOwn(TOOL_VARIABLES, tool) ? TOOL_VARIABLES[tool] : undefined;
  return {
    ...allowedVariables(BASE_VARIABLE, environment),
    ...(own ? allowedVariables(own, environment) : {}),
  };
}
