/**
 * Variables of the daemon no child process may inherit: vault secrets (`AGENTD_SECRET_*`), the
 * vault key, the API token, and the shell tool's own secret references.
 */
const HIDDEN_VARIABLE = /^(AGENTD_SECRET_|AGENTD_TOOL_SECRET_|AGENTD_VAULT_KEY$|AGENTD_TOKEN$)/;

/** Values no child may inherit under any variable name (config credentials given as `${VAR}`). */
const hiddenValues = new Set<string>();

/** Keeps every variable that holds `value` out of child processes, whatever its name. */
export function hideValueFromChildren(value: string): void {
  hiddenValues.add(value);
}

/**
 * The daemon's environment for a child (shell commands, CLI workers, MCP servers): every set
 * variable but those that carry secrets, by name or by value. Pass it with execa's `extendEnv: false`, or the child
 * gets the whole environment back.
 */
export function childEnvironment(environment: NodeJS.ProcessEnv = process.env): Record<string, string> {
  const inherited: Record<string, string> = {};
  for (const [name, value] of Object.entries(environment)) {
    if (value !== undefined && !HIDDEN_VARIABLE.test(name) && !hiddenValues.has(value))
      inherited[name] = value;
  }
  return inherited;
}
