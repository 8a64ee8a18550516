import type { Config } from "../config/config-schema.js";
import { hideValueFromChildren } from "./child-environment.js";
import type { SecretRedactor } from "./secret-redactor.js";

/**
 * The config values that are credentials whatever their source — written inline, from
 * `${ENV_VAR}` or from the vault: the LLM API key, the API token, and MCP servers' HTTP headers.
 */
function credentialsOf(config: Config): Array<{ name: string; value: string }> {
  const found: Array<{ name: string; value: string }> = [];
  const add = (name: string, value: string | undefined) => {
    if (value !== undefined && value !== "") found.push({ name, value });
  };
  add("llm.api_key", config.llm.api_key);
  add("server.token", config.server.token);
  for (const [server, settings] of Object.entries(config.mcp_servers)) {
    if ("headers" in settings) {
      for (const [header, value] of Object.entries(settings.headers))
        add(`mcp_servers.${server}.${header}`, value);
    }
  }
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
