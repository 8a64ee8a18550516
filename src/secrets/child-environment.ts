/**
 * Variables of the daemon no child process may inherit: everything named `AGENTD_*` (the vault
 * key, the API token, `AGENTD_SECRET_*`, the shell tool's own secret references).
 */
const HIDDEN_VARIABLE = /^AGENTD_/;

/** Variables the shell tool's commands get from the daemon: nothing else of its environment. */
const SHELL_VARIABLE = /^(PATH|HOME|LANG|LANGUAGE|TERM|TZ|LC_[A-Z_]+)$/;

/** Values no child may inherit under any variable name (config credentials given as `${VAR}`). */
const hiddenValues = new Set<string>();

/** Keeps every variable that holds `value` out of child processes, whatever its name. */
export function hideValueFromChildren(value: string): void {
  hiddenValues.add(value);
}

/**
 * The daemon's environment for a CLI worker or an MCP server: every set variable but those that
 * carry secrets, by name or by value. Pass it with execa's `extendEnv: false`, or the child gets
 * the whole environment back.
 */
export function childEnvironment(environment: NodeJS.ProcessEnv = process.env): Record<string, string> {
  const inherited: Record<string, string> = {};
  for (const [name, value] of Object.entries(environment)) {
    if (value !== undefined && !HIDDEN_VARIABLE.test(name) && !hiddenValues.has(value))
      inherited[name] = value;
  }
  return inherited;
}

/**
 * The environment of a shell tool command, built from an allow-list: PATH, HOME, LANG, LANGUAGE,
 * TERM, TZ and LC_* of the daemon, and TMPDIR (`temporaryFolder`). The call's own secret variables
 * are added by the caller.
 */
export function shellEnvironment(
  temporaryFolder: string,
  environment: NodeJS.ProcessEnv = process.env,
): Record<string, string> {
  const allowed: Record<string, string> = { TMPDIR: temporaryFolder };
  for (const [name, value] of Object.entries(environment)) {
    if (value !== undefined && SHELL_VARIABLE.test(name) && !hiddenValues.has(value)) allowed[name] = value;
  }
  allowed["TERM"] ??= "dumb";
  return allowed;
}
