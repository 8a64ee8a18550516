import type { Config } from "../config/config-schema.js";
import { hideValueFromChildren } from "./child-environment.js";
import type { SecretRedactor } from "./secret-redactor.js";

/** Header and variable names that carry credentials (`Authorization`, `X-Api-Key`, `GITHUB_TOKEN`). */
const CREDENTIAL_NAME =
  /authorization|cookie|token|secret|password|passwd|api[-_]?key|private[-_]?key|credential/i;

/** Shorter values are placeholders (`ollama`, `none`, `sk-x`), not credentials worth masking everywhere. */
const MIN_CREDENTIAL_LENGTH = 8;

/**
 * The config values that are credentials whatever their source — written inline, from
 * `${ENV_VAR}` or from the vault: the LLM API key, the API token, the credential-like headers
 * and environment entries of MCP servers and CLI tools, and the trace collector's password and
 * headers (every one: a vendor's key goes under a name of its own, `x-honeycomb-team`).
 */
function credentialsOf(config: Config): Array<{ name: string; value: string }> {
  const found: Array<{ name: string; value: string }> = [];
  const add = (name: string, value: string | undefined) => {
    if (value !== undefined && value.length >= MIN_CREDENTIAL_LENGTH) found.push({ name, value });
  };
  const addNamed = (prefix: string, entries: Record<string, string>) => {
    for (const [key, value] of Object.entries(entries))
      if (CREDENTIAL_NAME.test(key)) add(`${prefix}.${key}`, value);
  };
  add("llm.api_key", config.llm.api_key);
  add("server.token", config.server.token);
  add("store.url", passwordOf(config.store.url));
  const traces = config.telemetry.traces;
  if (traces !== undefined) {
    add("telemetry.traces.endpoint", passwordOf(traces.endpoint));
    for (const [key, value] of Object.entries(traces.headers ?? {}))
      add(`telemetry.traces.headers.${key}`, value);
  }
  for (const [server, settings] of Object.entries(config.mcp_servers)) {
    addNamed(`mcp_servers.${server}`, "headers" in settings ? settings.headers : settings.env);
  }
  for (const [tool, settings] of Object.entries(config.cli_tools))
    addNamed(`cli_tools.${tool}`, settings.env);
  return found;
}

/**
 * Masks the config's credentials everywhere (`[secret:llm.api_key]`) and keeps any environment
 * variable holding one from child processes: `api_key: ${OPENAI_API_KEY}` must not let an agent's
 * `env` print the key, nor a CLI worker or MCP server inherit it.
 */
export function protectConfigSecrets(config: Config, redactor: SecretRedactor): void {
  for (const { name, value } of credentialsOf(config)) {
    // A vault secret keeps the name it was learned under (`[secret:openai]`).
    if (!redactor.knows(value)) redactor.add(name, value);
    hideValueFromChildren(value);
  }
}

/** The password in a URL (`postgres://user:password@host/db`), decoded. */
function passwordOf(url: string | undefined): string | undefined {
  if (url === undefined) return undefined;
  try {
    const password = decodeURIComponent(new URL(url).password);
    return password === "" ? undefined : password;
  } catch {
    return undefined;
  }
}
