/**
 * Variables of the daemon no child process may inherit: vault secrets (`AGENTD_SECRET_*`), the
 * vault key, the API token, and the shell tool's own secret references.
 */
const HIDDEN_VARIABLE = /^(AGENTD_SECRET_|AGENTD_TOOL_SECRET_|AGENTD_VAULT_KEY$|AGENTD_TOKEN$)/;

/**
 * The daemon's environment for a child (shell commands, CLI workers, MCP servers): every set
 * variable but those that carry secrets. Pass it with execa's `extendEnv: false`, or the child
 * gets the whole environment back.
 */
export function childEnvironment(environment: NodeJS.ProcessEnv = process.env): Record<string, string> {
  const inherited: Record<string, string> = {};
  for (const [name, value] of Object.entries(environment)) {
    if (value !== undefined && !HIDDEN_VARIABLE.test(name)) inherited[name] = value;
  }
  return inherited;
}
