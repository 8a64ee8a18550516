import type { PermissionRules } from "../config/config-schema.js";

/** What a permission check decides for one tool call. */
export type PermissionDecision = "allow" | "ask" | "deny";

/** A rule from `permissions:`: `tool` (every call) or `tool(pattern)` (calls whose subject matches). */
export interface PermissionRule {
  /** The rule as written, for messages. */
  source: string;
  /** Tool name; `*` matches any run of characters (`mcp:github/*`). */
  tool: string;
  /** Argument pattern; undefined for a bare tool rule. */
  pattern: string | undefined;
}

/** Rules of one kind, for one decision. */
export interface RuleSet {
  allow: PermissionRule[];
  ask: PermissionRule[];
  deny: PermissionRule[];
}

/**
 * Parses `tool` or `tool(pattern)`. A malformed rule (a missing `)`) still yields its tool and the
 * rest as the pattern, so a typo in a deny rule narrows nothing it was meant to cover.
 */
export function parsePermissionRule(source: string): PermissionRule {
  const trimmed = source.trim();
  const open = trimmed.indexOf("(");
  if (open === -1) return { source, tool: trimmed, pattern: undefined };
  const close = trimmed.endsWith(")") ? trimmed.length - 1 : trimmed.length;
  return { source, tool: trimmed.slice(0, open).trim(), pattern: trimmed.slice(open + 1, close) };
}

/** Parses every rule of a `permissions:` block. */
export function parseRuleSet(rules: PermissionRules): RuleSet {
  return {
    allow: rules.allow.map(parsePermissionRule),
    ask: rules.ask.map(parsePermissionRule),
    deny: rules.deny.map(parsePermissionRule),
  };
}

/** Parsed rule sets per tool, per `permissions:` block: a definition's block is parsed once. */
const compiledBlocks = new WeakMap<PermissionRules, { rules: RuleSet; byTool: Map<string, RuleSet> }>();

/**
 * The rules of `permissions` that name `tool`, parsed and filtered once per block and tool (a
 * definition keeps its block object, so every call and every path a walk meets reuses them).
 */
export function compiledRulesFor(permissions: PermissionRules, tool: string): RuleSet {
  let block = compiledBlocks.get(permissions);
  if (!block) {
    block = { rules: parseRuleSet(permissions), byTool: new Map() };
    compiledBlocks.set(permissions, block);
  }
  let forTool = block.byTool.get(tool);
  if (!forTool) {
    forTool = rulesForTool(block.rules, tool);
    block.byTool.set(tool, forTool);
  }
  return forTool;
}

/** The rules that name `tool` (exactly or by a `*` pattern). */
export function rulesForTool(rules: RuleSet, tool: string): RuleSet {
  const forTool = (list: PermissionRule[]) => list.filter((rule) => globMatches(rule.tool, tool, false));
  return { allow: forTool(rules.allow), ask: forTool(rules.ask), deny: forTool(rules.deny) };
}

const compiled = new Map<string, RegExp>();

/**
 * Glob-like matching of a whole subject: `*` matches any run of characters, everything else is
 * literal. A trailing ` *` also matches nothing at all, so `rm *` covers a bare `rm`.
 * `loose` matching ignores case: deny and ask rules use it, so they catch more, never less.
 */
export function globMatches(pattern: string, subject: string, loose: boolean): boolean {
  const key = `${loose ? "i" : "s"}:${pattern}`;
  let expression = compiled.get(key);
  if (!expression) {
    const trailingAny = pattern.endsWith(" *");
    const body = trailingAny ? pattern.slice(0, -2) : pattern;
    const source = body
      .split("*")
      .map((part) => part.replace(/[.+?^${}()|[\]\\/]/g, "\\$&"))
      .join("[\\s\\S]*");
    expression = new RegExp(`^${source}${trailingAny ? "(?:\\s[\\s\\S]*)?" : ""}$`, loose ? "i" : "");
    compiled.set(key, expression);
  }
  return expression.test(subject);
}

/** Whether a rule matches a call of its tool with this subject (a bare rule matches every call). */
export function ruleMatches(rule: PermissionRule, subject: string, loose: boolean): boolean {
  return rule.pattern === undefined || globMatches(rule.pattern, subject, loose);
}
