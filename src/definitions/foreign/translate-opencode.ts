import { ALL_BUILTIN_TOOLS, mapForeignTool, ruleOf } from "./foreign-tool-names.js";
import {
  describeFromBody,
  ignoreKey,
  mergePermissions,
  type TranslatedTools,
  type TranslationInput,
  translateTurnLimit,
} from "./foreign-translation.js";

/** opencode's keys this translator consumes, for detecting the dialect. */
export const OPENCODE_KEYS = [
  "mode",
  "steps",
  "maxSteps",
  "permission",
  "hidden",
  "disable",
  "top_p",
] as const;

/** opencode's permission keys and the agentd tool each governs. */
const PERMISSION_TOOLS: Record<string, string> = {
  edit: "write_file",
  write: "write_file",
  bash: "shell",
  webfetch: "http_request",
  read: "read_file",
  grep: "search_files",
  glob: "search_files",
  list: "list_dir",
};

type Verdict = "allow" | "ask" | "deny";
const VERDICTS: readonly string[] = ["allow", "ask", "deny"];

/**
 * An opencode agent (`.opencode/agent/*.md`) in agentd's terms: `tools` as a map of booleans over
 * every tool, `permission` (`allow | ask | deny`, `bash` also a map of command globs), `steps`,
 * `disable`; a missing description is taken from the body.
 */
export function translateOpencode(input: TranslationInput): void {
  const { data } = input;
  const translated: TranslatedTools = { tools: [...ALL_BUILTIN_TOOLS], allow: [], ask: [], deny: [] };
  if (data.tools === undefined) {
    input.note("tools", "left out: every built-in tool, as opencode enables all of its tools");
  } else if (isMap(data.tools)) {
    translateToolSwitches(input, data.tools, translated);
  } else {
    // A list is agentd's own form: keep it, with the names mapped.
    translated.tools = [];
    for (const entry of Array.isArray(data.tools) ? data.tools : []) {
      const tool = typeof entry === "string" ? mapForeignTool(entry).tool : undefined;
      if (tool !== undefined && !translated.tools.includes(tool)) translated.tools.push(tool);
    }
  }
  if (data.permission !== undefined) {
    if (isMap(data.permission)) translatePermission(input, data.permission, translated);
    else input.note("permission", "ignored: write a map such as { edit: ask, bash: allow }");
    delete data.permission;
  }
  data.tools = translated.tools;
  mergePermissions(data, translated);
  translateTurnLimit(input, "steps");
  translateTurnLimit(input, "maxSteps");
  if (typeof data.disable === "boolean") {
    data.enabled = !data.disable;
    delete data.disable;
    input.note("disable", `understood as enabled: ${String(data.enabled)}`);
  }
  ignoreKey(input, "mode", "every agentd agent can be run directly (opencode's primary and subagent)");
  ignoreKey(input, "hidden", "opencode's menu setting");
  ignoreKey(input, "color", "display only");
  ignoreKey(input, "top_p", "agentd sets only temperature");
  describeFromBody(input);
}

function isMap(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === "object" && !Array.isArray(value);
}

/** `tools: { write: false, bash: true }`: every tool, minus the ones switched off. */
function translateToolSwitches(
  input: TranslationInput,
  switches: Record<string, unknown>,
  translated: TranslatedTools,
): void {
  const off: string[] = [];
  const unknown: string[] = [];
  for (const [name, enabled] of Object.entries(switches)) {
    const pattern = name.includes("*")
      ? new RegExp(`^${name.split("*").map(escape).join(".*")}$`)
      : undefined;
    const matched = pattern
      ? Object.keys(PERMISSION_TOOLS).filter((key) => pattern.test(key))
      : [name].filter(() => mapForeignTool(name).tool !== undefined);
    if (matched.length === 0) {
      unknown.push(name);
      continue;
    }
    if (enabled !== false) continue;
    for (const key of matched) {
      const tool = mapForeignTool(key).tool;
      if (tool !== undefined && !off.includes(tool)) off.push(tool);
    }
  }
  translated.tools = translated.tools.filter((tool) => !off.includes(tool));
  input.note(
    "tools",
    `understood as every built-in tool${off.length > 0 ? ` but ${off.join(", ")}` : ""}${
      unknown.length > 0 ? `; no agentd counterpart, ignored: ${unknown.join(", ")}` : ""
    }`,
  );
}

function escape(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}

/** `permission: { edit: ask, bash: { "git *": allow, "*": ask }, webfetch: deny }` as rules. */
function translatePermission(
  input: TranslationInput,
  permission: Record<string, unknown>,
  translated: TranslatedTools,
): void {
  const understood: string[] = [];
  for (const [key, value] of Object.entries(permission)) {
    const tool = PERMISSION_TOOLS[key];
    if (tool === undefined) {
      input.note(`permission.${key}`, "ignored: agentd has no such tool");
      continue;
    }
    if (typeof value === "string" && VERDICTS.includes(value)) {
      translated[value as Verdict].push(tool);
      understood.push(`${key}: ${value} → ${value} ${tool}`);
    } else if (isMap(value)) {
      understood.push(...translateGlobs(input, key, tool, value, translated));
    } else {
      input.note(`permission.${key}`, `ignored: write allow, ask or deny`);
    }
  }
  if (understood.length > 0) input.note("permission", `understood as ${understood.join("; ")}`);
}

/**
 * `bash: { "git status": allow, "*": ask }`, `edit: { "**\/dist/**": deny }`: one rule per glob
 * (commands for bash, paths for edit). agentd decides deny, then ask, then allow, whatever the
 * order, where opencode lets a specific entry beat `*`. So `"*": ask` adds nothing (an unlisted
 * call asks anyway), and `"*": deny` beside specific entries becomes ask, never allow.
 */
function translateGlobs(
  input: TranslationInput,
  key: string,
  tool: string,
  globs: Record<string, unknown>,
  translated: TranslatedTools,
): string[] {
  const understood: string[] = [];
  const specific = Object.entries(globs).filter(([glob]) => glob !== "*");
  for (const [glob, verdict] of specific) {
    if (typeof verdict !== "string" || !VERDICTS.includes(verdict)) continue;
    translated[verdict as Verdict].push(ruleOf(tool, glob));
    understood.push(`${key} "${glob}": ${verdict} → ${verdict} ${ruleOf(tool, glob)}`);
  }
  const fallback = globs["*"];
  if (fallback === "allow" || (fallback === "deny" && specific.length === 0)) {
    translated[fallback].push(tool);
    understood.push(`${key} "*": ${fallback} → ${fallback} ${tool}`);
  } else if (fallback === "deny") {
    input.note(
      `permission.${key}`,
      'the "*": deny default becomes ask: other calls ask rather than being denied',
    );
  }
  return understood;
}
