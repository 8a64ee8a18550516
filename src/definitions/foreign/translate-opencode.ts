import { ALL_BUILTIN_TOOLS, mapForeignTool } from "./foreign-tool-names.js";
import { OPENCODE_PERMISSION_TOOLS, translateOpencodePermission } from "./opencode-permission.js";
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

/**
 * An opencode agent (`.opencode/agent/*.md`) in agentd's terms: `tools` as a map of booleans over
 * every tool, `permission` (opencode's rules, last match wins; left out: every tool allowed, as in
 * opencode), `permissions` as its alias, `steps`, `disable`; a missing description is taken from the body.
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
  translateOpencodePermission(input, permissionKey(input), translated);
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
      ? Object.keys(OPENCODE_PERMISSION_TOOLS).filter((key) => pattern.test(key))
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

/**
 * `permission`, or `permissions` written in opencode's form (some files use the plural): an alias,
 * with a note. agentd's own `permissions` (allow / ask / deny lists) is left alone.
 */
function permissionKey(input: TranslationInput): string {
  const plural = input.data.permissions;
  if (input.data.permission !== undefined || !isOpencodePermissions(plural)) return "permission";
  input.note("permissions", 'understood as opencode\'s "permission" (singular): rename the key');
  return "permissions";
}

/** Whether `permissions:` holds opencode's rules rather than agentd's allow / ask / deny lists. */
export function isOpencodePermissions(value: unknown): boolean {
  if (typeof value === "string") return ["allow", "ask", "deny"].includes(value);
  if (!isMap(value)) return false;
  return Object.entries(value).some(
    ([key, rules]) => !["allow", "ask", "deny"].includes(key) || !Array.isArray(rules),
  );
}
