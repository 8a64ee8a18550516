const VARIABLE_PATTERN = /\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}/g;

/**
 * Expands `${VAR}` and `${VAR:-default}` in every string of a parsed YAML tree. `{{secret:name}}`
 * is left untouched for the vault. An unset variable without a default becomes "" and is reported.
 */
export function expandEnvironment(
  value: unknown,
  environment: NodeJS.ProcessEnv,
  onMissing: (name: string) => void,
): unknown {
  if (typeof value === "string") {
    return value.replace(VARIABLE_PATTERN, (_match, name: string, fallback: string | undefined) => {
      const found = environment[name];
      if (found !== undefined && found !== "") return found;
      if (fallback !== undefined) return fallback;
      onMissing(name);
      return "";
    });
  }
  if (Array.isArray(value)) return value.map((item) => expandEnvironment(item, environment, onMissing));
  if (value !== null && typeof value === "object") {
    return Object.fromEntries(
      Object.entries(value).map(([key, item]) => [key, expandEnvironment(item, environment, onMissing)]),
    );
  }
  return value;
}
