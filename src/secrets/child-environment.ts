/**
 * Variables of the daemon no child process may inherit, whatever an allow-list says: everything
 * named `AGENTD_*` (the vault key, the API token, `AGENTD_SECRET_*`).
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
 * The daemon's variables whose name `allowed` matches, less those holding a config credential's
 * value and exported shell functions (`()…`, a way to run code in a child's shell). Every child
 * environment starts from one of these allow-lists, never from the daemon's whole environment:
 * an `AWS_SECRET_ACCESS_KEY` or a `DATABASE_URL` of the daemon's reaches no child. Pass the result
 * with execa's `extendEnv: false`, or the child gets the whole environment back.
 */
export function allowedVariables(
  allowed: RegExp,
  environment: NodeJS.ProcessEnv = process.env,
): Record<string, string> {
  const inherited: Record<string, string> = {};
  for (const [name, value] of Object.entries(environment)) {
    if (value === undefined || !allowed.test(name) || HIDDEN_VARIABLE.test(name)) continue;
    if (hiddenValues.has(value) || value.startsWith("()")) continue;
    inherited[name] = value;
  }
  return inherited;
}

/**
 * The environment of a shell tool command (and of a hook, which runs as one), built from an
 * allow-list: PATH, HOME, LANG, LANGUAGE, TERM, TZ and LC_* of the daemon, and TMPDIR
 * (`temporaryFolder`). The call's own secret variables are added by the caller.
 */
export function shellEnvironment(
  temporaryFolder: string,
  environment: NodeJS.ProcessEnv = process.env,
): Record<string, string> {
  const allowed: Record<string, string> = {
    TMPDIR: temporaryFolder,
    ...allowedVariables(SHELL_VARIABLE, environment),
  };
  allowed["TERM"] ??= "dumb";
  return allowed;
}
