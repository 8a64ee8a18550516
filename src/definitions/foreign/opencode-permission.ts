import { ruleOf } from "./foreign-tool-names.js";
import type { TranslatedTools, TranslationInput } from "./foreign-translation.js";

/** opencode's permission keys and the agentd tool each governs. */
export const OPENCODE_PERMISSION_TOOLS: Record<string, string> = {
  edit: "write_file",
  write: "write_file",
  patch: "write_file",
  bash: "shell",
  webfetch: "http_request",
  read: "read_file",
  grep: "search_files",
  glob: "search_files",
  list: "list_dir",
};

type Verdict = "allow" | "ask" | "deny";
const VERDICTS: readonly string[] = ["allow", "ask", "deny"];
const STRICTNESS: Record<Verdict, number> = { allow: 0, ask: 1, deny: 2 };

/** One opencode rule: the permission key it names (may hold `*`), the input glob, the verdict. */
interface OpencodeRule {
  key: string;
  glob: string;
  verdict: Verdict;
}

/**
 * opencode's own defaults, before an agent's rules: every tool is allowed, and reading `.env` files
 * is denied (`*.env.example` allowed again, which agentd's deny-first order cannot express: such a
 * file is denied too).
 */
const OPENCODE_DEFAULTS: readonly OpencodeRule[] = [
  { key: "*", glob: "*", verdict: "allow" },
  { key: "read", glob: "*.env", verdict: "deny" },
  { key: "read", glob: "*.env.*", verdict: "deny" },
];

/**
 * opencode's `permission:` (or no such key: opencode's defaults) in agentd's rules, for the tools
 * the agent has. opencode reads its rules in order and the last one that matches a call wins;
 * agentd decides deny, then ask, then allow. Per tool, the last `"*"` rule is its default
 * (allow: `allow tool`; deny with no exception: the tool is taken away; ask: agentd's own
 * default) and the specific rules after it become `tool(glob)` rules. Where agentd's order cannot
 * say the same, the translation is stricter than opencode and says so in a note: a specific deny
 * or ask written before a later `"*"` still holds, and the calls a `"*": deny` leaves beside
 * specific allows ask rather than being denied.
 */
export function translateOpencodePermission(
  input: TranslationInput,
  key: string,
  translated: TranslatedTools,
): void {
  const written = input.data[key];
  const rules = [...OPENCODE_DEFAULTS];
  if (written === undefined) {
    input.note(
      "permission",
      "left out: every tool runs without asking, as in opencode (reading .env files is denied); " +
        "write permission: { bash: ask } to be asked",
    );
  } else if (typeof written === "string" && VERDICTS.includes(written)) {
    rules.push({ key: "*", glob: "*", verdict: written as Verdict });
  } else if (isMap(written)) {
    rules.push(...writtenRules(input, key, written));
  } else {
    input.note(key, 'ignored: write allow, ask, deny or a map such as { edit: ask, bash: allow, "*": deny }');
  }
  delete input.data[key];
  const understood: string[] = [];
  const taken: string[] = [];
  for (const tool of [...translated.tools]) {
    const keys = Object.keys(OPENCODE_PERMISSION_TOOLS).filter(
      (name) => OPENCODE_PERMISSION_TOOLS[name] === tool,
    );
    if (keys.length === 0) continue;
    // Several opencode keys govern one agentd tool (edit, write and patch; grep and glob): their
    // rules read as one list, in the order written.
    const { fallback, specific } = rulesOfKeys(input, key, keys, rules);
    const outcome = toolOutcome(input, key, tool, fallback, specific, translated);
    if (outcome === "taken away") taken.push(tool);
    else if (outcome !== "") understood.push(outcome);
  }
  translated.tools = translated.tools.filter((tool) => !taken.includes(tool));
  if (taken.length > 0) understood.push(`denied, so not offered: ${taken.join(", ")}`);
  if (understood.length > 0) input.note(key, `understood as ${understood.join("; ")}`);
}

function isMap(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === "object" && !Array.isArray(value);
}

/** The written map as ordered rules: `edit: ask`, `bash: { "git *": allow }`, `"*": deny`. */
function writtenRules(
  input: TranslationInput,
  key: string,
  permission: Record<string, unknown>,
): OpencodeRule[] {
  const rules: OpencodeRule[] = [];
  for (const [name, value] of Object.entries(permission)) {
    const known = Object.keys(OPENCODE_PERMISSION_TOOLS).some((tool) => keyMatches(name, tool));
    if (!known) {
      input.note(`${key}.${name}`, "ignored: agentd has no such tool");
      continue;
    }
    if (typeof value === "string" && VERDICTS.includes(value)) {
      rules.push({ key: name, glob: "*", verdict: value as Verdict });
    } else if (isMap(value)) {
      for (const [glob, verdict] of Object.entries(value)) {
        if (typeof verdict === "string" && VERDICTS.includes(verdict)) {
          rules.push({ key: name, glob, verdict: verdict as Verdict });
        } else {
          input.note(`${key}.${name}`, `"${glob}" ignored: write allow, ask or deny`);
        }
      }
    } else {
      input.note(`${key}.${name}`, "ignored: write allow, ask or deny, or a map of patterns");
    }
  }
  return rules;
}

/** Whether a written permission key (`*`, `edit`, `web*`) names opencode's key `name`. */
function keyMatches(written: string, name: string): boolean {
  if (!written.includes("*")) return written === name;
  const source = written
    .split("*")
    .map((part) => part.replace(/[.+?^${}()|[\]\\]/g, "\\$&"))
    .join(".*");
  return new RegExp(`^${source}$`).test(name);
}

/**
 * The rules of opencode's keys for one tool: its default (the last `"*"` rule that names one of
 * them) and the specific rules that still count. A specific rule after that default overrides it in opencode; one before it is
 * shadowed, and is kept only when it is stricter than the default (the file's author meant it).
 */
function rulesOfKeys(
  input: TranslationInput,
  key: string,
  names: readonly string[],
  rules: readonly OpencodeRule[],
): { fallback: Verdict; specific: OpencodeRule[] } {
  const mine = rules.filter((rule) => names.some((name) => keyMatches(rule.key, name)));
  let last = -1;
  mine.forEach((rule, index) => {
    if (rule.glob === "*") last = index;
  });
  const fallback = mine[last]?.verdict ?? "allow";
  const specific: OpencodeRule[] = [];
  mine.forEach((rule, index) => {
    if (rule.glob === "*") return;
    if (index > last) {
      specific.push(rule);
    } else if (STRICTNESS[rule.verdict] > STRICTNESS[fallback]) {
      specific.push(rule);
      if (!OPENCODE_DEFAULTS.includes(rule)) {
        input.note(
          `${key}.${rule.key}`,
          `"${rule.glob}": ${rule.verdict} comes before "*": ${fallback}, which opencode lets win; ` +
            `agentd keeps the ${rule.verdict} — put "*" first`,
        );
      }
    } else if (!OPENCODE_DEFAULTS.includes(rule)) {
      input.note(
        `${key}.${rule.key}`,
        `"${rule.glob}": ${rule.verdict} is overridden by the later "*": ${fallback} (in opencode the ` +
          'last matching rule wins) — put "*" first',
      );
    }
  });
  return { fallback, specific };
}

/**
 * Adds one tool's rules and says what they are; "taken away" for a tool denied outright, "" when
 * agentd's own default (ask) already says it.
 */
function toolOutcome(
  input: TranslationInput,
  key: string,
  tool: string,
  fallback: Verdict,
  specific: readonly OpencodeRule[],
  translated: TranslatedTools,
): string {
  const said: string[] = [];
  // A rule that says what the default says adds nothing; agentd's order would let it override more.
  const exceptions = specific.filter((rule) => rule.verdict !== fallback);
  for (const rule of exceptions) {
    translated[rule.verdict].push(ruleOf(tool, rule.glob));
    said.push(`${rule.verdict} ${ruleOf(tool, rule.glob)}`);
  }
  if (fallback === "allow") {
    translated.allow.push(tool);
    said.unshift(`allow ${tool}`);
  } else if (fallback === "deny") {
    const opened = exceptions.filter((rule) => rule.verdict !== "deny");
    if (opened.length === 0) {
      translated.deny.push(tool);
      return "taken away";
    }
    input.note(
      key,
      `${tool}: the "*": deny beside ${opened.map((rule) => `"${rule.glob}"`).join(", ")} becomes ask: ` +
        "agentd cannot deny only the calls no rule names, so those calls ask",
    );
  }
  return said.join(", ");
}
