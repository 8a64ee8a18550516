/** Which tool an agent file was written for. */
export type AgentDialect = "agentd" | "claude-code" | "opencode";

/** What a translator works on: the frontmatter as written, and where to say what it did. */
export interface TranslationInput {
  /** The frontmatter as parsed from YAML: a copy the translator may change. */
  data: Record<string, unknown>;
  /** The Markdown body, for a description the file leaves out. */
  body: string;
  /** Records what became of a foreign key: understood as …, or ignored and why. */
  note(key: string, message: string): void;
}

/** A tool list in progress, with the rules the translation adds to agentd's `permissions`. */
export interface TranslatedTools {
  tools: string[];
  allow: string[];
  ask: string[];
  deny: string[];
}

/** Adds the translated rules to the agent's own `permissions`, creating it when needed. */
export function mergePermissions(data: Record<string, unknown>, rules: Omit<TranslatedTools, "tools">): void {
  const own = (data.permissions ?? {}) as Record<string, unknown>;
  const merged: Record<string, unknown> = { ...own };
  for (const verdict of ["allow", "ask", "deny"] as const) {
    const existing = Array.isArray(own[verdict]) ? (own[verdict] as unknown[]) : [];
    const added = [...new Set(rules[verdict])].filter((rule) => !existing.includes(rule));
    if (existing.length + added.length > 0) merged[verdict] = [...existing, ...added];
  }
  if (Object.keys(merged).length > 0) data.permissions = merged;
}

/** `steps` / `maxTurns`: the most rounds, agentd's `limits.max_iterations` unless that is set. */
export function translateTurnLimit(input: TranslationInput, key: string): void {
  const value = input.data[key];
  if (value === undefined) return;
  delete input.data[key];
  const limits = (input.data.limits ?? {}) as Record<string, unknown>;
  if (limits.max_iterations !== undefined) {
    input.note(key, "ignored: limits.max_iterations is set");
    return;
  }
  input.data.limits = { ...limits, max_iterations: value };
  input.note(key, `understood as limits.max_iterations: ${String(value)}`);
}

/** Drops a key agentd has no use for, saying why. */
export function ignoreKey(input: TranslationInput, key: string, why: string): void {
  if (!(key in input.data)) return;
  delete input.data[key];
  input.note(key, `ignored: ${why}`);
}

/** A description for a file that has none (opencode allows that): the body's first line. */
export function describeFromBody(input: TranslationInput): void {
  if (typeof input.data.description === "string" && input.data.description.trim() !== "") return;
  const firstLine = input.body
    .split("\n")
    .map((line) => line.replace(/^#+\s*/, "").trim())
    .find((line) => line !== "");
  if (firstLine === undefined) return;
  input.data.description = firstLine.length > 120 ? `${firstLine.slice(0, 117)}…` : firstLine;
  input.note("description", "missing: the first line of the instructions is used");
}
