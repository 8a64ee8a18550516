import { AgentdError } from "../../errors/agentd-error.js";
import { refuseTemplatesInCode } from "./shell-code-templates.js";
import { type QuoteContext, ShellQuoteScanner } from "./shell-quote-scanner.js";

/** A command whose secret templates became variable references, and the values of those variables. */
export interface ShellSecretReferences {
  command: string;
  /** Variable name → secret value, for the child's environment only. */
  environment: Record<string, string>;
}

/** Prefix of the variables that carry secret values into a shell child. */
export const SHELL_SECRET_VARIABLE_PREFIX = "AGENTD_TOOL_SECRET_";

/**
 * Replaces every `{{secret:name}}` in a shell command by a reference to an environment variable
 * (`AGENTD_TOOL_SECRET_1`, one per name) that holds the value, so a value is never parsed as shell
 * syntax, whatever characters it contains. The reference fits where the template stands:
 *
 * - unquoted: `"${V}"` (one word: no splitting, no globbing);
 * - inside `"…"` or an unquoted heredoc: `${V}`;
 * - inside `'…'`: `'"${V}"'` (close the quote, the variable in double quotes, reopen);
 * - inside `$'…'`: `'"${V}"$'`.
 *
 * Templates inside `$(…)`, backticks and `${…}` follow the same rules at their own level. Where no
 * reference can work safely — a quoted heredoc (`<<'EOF'`, nothing expands there) or arithmetic
 * (`$((…))`, `((…))`, which evaluates a variable's value as code) — the call is refused with
 * TOOL_BAD_ARGUMENTS and a hint; so is a template inside code that a program runs (`bash -c '…'`,
 * `eval`, see {@link refuseTemplatesInCode}), where the value would be parsed as code.
 */
export function referenceSecrets(
  command: string,
  secretValue: (name: string) => string,
): ShellSecretReferences {
  refuseTemplatesInCode(command);
  const variables = new Map<string, string>();
  const environment: Record<string, string> = {};
  const variableFor = (name: string) => {
    let variable = variables.get(name);
    if (!variable) {
      variable = `${SHELL_SECRET_VARIABLE_PREFIX}${variables.size + 1}`;
      variables.set(name, variable);
      environment[variable] = secretValue(name);
    }
    return variable;
  };
  const scanner = new ShellQuoteScanner(command, (name, context) =>
    reference(variableFor(name), context, name),
  );
  return { command: scanner.run(), environment };
}

function reference(variable: string, context: QuoteContext, name: string): string {
  switch (context) {
    case "bare":
      return `"\${${variable}}"`;
    case "double":
    case "heredoc":
      return `\${${variable}}`;
    case "single":
      return `'"\${${variable}}"'`;
    case "ansi":
      return `'"\${${variable}}"$'`;
    case "literal-heredoc":
      throw refusal(
        name,
        "inside a quoted heredoc (<<'EOF'), where nothing expands",
        "use an unquoted delimiter (<<EOF)",
      );
    case "arithmetic":
      throw refusal(
        name,
        "inside arithmetic ($((…)) or ((…))), which would evaluate its value as code",
        "compare it as a string instead",
      );
  }
}

function refusal(name: string, where: string, hint: string): AgentdError {
  return new AgentdError("TOOL_BAD_ARGUMENTS", `{{secret:${name}}} cannot be used ${where}`, { hint });
}
