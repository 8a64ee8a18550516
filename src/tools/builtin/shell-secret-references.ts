import { AgentdError } from "../../errors/agentd-error.js";
import { type QuoteContext, type TemplateSite, readShell } from "../../permissions/shell-reading.js";
import { refuseTemplatesInCode } from "./shell-template-code.js";

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
 * syntax, whatever characters it contains. Where each template stands comes from the same bash
 * parse the permission check used; the reference fits there:
 *
 * - unquoted: `"${V}"` (one word: no splitting, no globbing);
 * - inside `"…"` or an unquoted heredoc: `${V}`;
 * - inside `'…'`: `'"${V}"'` (close the quote, the variable in double quotes, reopen);
 * - inside `$'…'`: `'"${V}"$'`.
 *
 * Where no reference can work safely — a quoted heredoc (`<<'EOF'`, nothing expands there),
 * arithmetic or a `[[ … ]]` test (which evaluate a variable's value as code), text the parser
 * cannot read — the call is refused with TOOL_BAD_ARGUMENTS and a hint; so is a template inside
 * code that a program runs (see {@link refuseTemplatesInCode}).
 */
export function referenceSecrets(
  command: string,
  secretValue: (name: string) => string,
): ShellSecretReferences {
  const reading = readShell(command);
  if (reading.templates.length === 0) return { command, environment: {} };
  const unreadable = reading.doubts.find(
    (doubt) => doubt.startsWith("text the bash parser") || doubt.startsWith("syntax"),
  );
  if (unreadable) {
    throw refusal(reading.templates[0]?.name ?? "", `in ${unreadable}`, "write the command in plain bash");
  }
  refuseTemplatesInCode(reading);
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
  let output = "";
  let position = 0;
  for (const site of reading.templates) {
    const escaped = precededByEscape(command, site.start);
    // A backslash before the template: dropped where it would escape the reference's opening quote,
    // doubled where it would otherwise escape the `$` or close the quote.
    const before = command.slice(position, escaped && site.context === "bare" ? site.start - 1 : site.start);
    const extra = escaped && /^(double|heredoc|ansi)$/.test(site.context) ? "\\" : "";
    output += `${before}${extra}${reference(variableFor(site.name), site)}`;
    position = site.end;
  }
  return { command: output + command.slice(position), environment };
}

function precededByEscape(text: string, at: number): boolean {
  let count = 0;
  while (at - count - 1 >= 0 && text[at - count - 1] === "\\") count++;
  return count % 2 === 1;
}

function reference(variable: string, site: TemplateSite): string {
  const context: QuoteContext = site.context;
  switch (context) {
    case "bare":
    case "comment":
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
        site.name,
        "inside a quoted heredoc (<<'EOF'), where nothing expands",
        "use an unquoted delimiter (<<EOF)",
      );
    case "arithmetic":
      throw refusal(
        site.name,
        "inside arithmetic ($((…)), ((…)), an index or a [[ … ]] test), which would evaluate its value as code",
        "compare it as a string instead",
      );
  }
}

function refusal(name: string, where: string, hint: string): AgentdError {
  return new AgentdError("TOOL_BAD_ARGUMENTS", `{{secret:${name}}} cannot be used ${where}`, { hint });
}
