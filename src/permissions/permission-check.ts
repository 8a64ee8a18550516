import type { PermissionRules } from "../config/config-schema.js";
import { type PermissionDecision, type RuleSet, compiledRulesFor, ruleMatches } from "./permission-rule.js";
import { ShellPermissionCheck } from "./shell-permission.js";

/** The outcome of a permission check, with the reason shown to the model and in events. */
export interface PermissionVerdict {
  decision: PermissionDecision;
  reason: string;
}

/** What a rule pattern is matched against for one call. */
export type PermissionSubject =
  /** A shell command: parsed, every part checked (SPEC 1 `shell(...)` rules). */
  | { kind: "shell"; command: string }
  /** Paths, a URL or JSON arguments: every text must pass (a path as given and as resolved). */
  | { kind: "texts"; texts: string[] };

/**
 * Decides allow / ask / deny for one call from `definition.permissions` (config rules, then the
 * agent's). Deny beats ask beats allow; a tool no rule names is `ask`.
 */
export function checkPermission(
  permissions: PermissionRules,
  tool: string,
  subject: PermissionSubject,
  options: { unlisted?: "ask" | "allow" } = {},
): PermissionVerdict {
  const rules = compiledRulesFor(permissions, tool);
  if (subject.kind === "shell") return new ShellPermissionCheck(rules).check(subject.command);
  return checkTexts(rules, tool, subject.texts, options.unlisted ?? "ask");
}

function checkTexts(
  rules: RuleSet,
  tool: string,
  texts: string[],
  unlisted: "ask" | "allow",
): PermissionVerdict {
  const matching = (list: RuleSet["allow"], loose: boolean) =>
    list.find((rule) => texts.some((text) => ruleMatches(rule, text, loose)));
  const denied = matching(rules.deny, true);
  if (denied) return { decision: "deny", reason: `denied by ${denied.source}` };
  const asked = matching(rules.ask, true);
  if (asked) return { decision: "ask", reason: `${asked.source} asks` };
  const allowed = rules.allow.find((rule) => texts.every((text) => ruleMatches(rule, text, false)));
  if (allowed) return { decision: "allow", reason: `allowed by ${allowed.source}` };
  if (unlisted === "allow") return { decision: "allow", reason: `${tool} is granted by the agent file` };
  return { decision: "ask", reason: `no rule allows this ${tool} call` };
}

/**
 * Whether a deny or ask rule with a pattern names this text (a path met while `list_dir` or
 * `search_files` walks a folder the call was allowed to start in). A walk leaves such entries out:
 * a rule such as `search_files(private/*)` must not be sidestepped by searching `.`.
 */
export function restrictedByPattern(permissions: PermissionRules, tool: string, text: string): boolean {
  const rules = compiledRulesFor(permissions, tool);
  return [...rules.deny, ...rules.ask].some(
    (rule) => rule.pattern !== undefined && ruleMatches(rule, text, true),
  );
}
