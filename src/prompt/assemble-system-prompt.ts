import type { Preset } from "../presets/preset-schema.js";

/** What the system prompt of a run is made of. */
export interface SystemPromptParts {
  /** The agent's display name: the heading when a preset gives a description but no role. */
  agentName: string;
  /** The agent file's Markdown body. */
  instructions: string;
  /** The preset chain root-first: the last entry is the agent's own preset. */
  presets: readonly Preset[];
}

/**
 * SPEC 2: the system prompt of a run, in this order: the preset's role and description, the
 * agent's instructions, then "Critical rules", "Deliverable templates" and "Success metrics"
 * gathered along the preset chain (parents' entries first). Empty sections are left out.
 */
export function assembleSystemPrompt(parts: SystemPromptParts): string {
  const sections = [
    identitySection(parts),
    parts.instructions.trim(),
    listSection(
      "## Critical rules",
      "These rules are non-negotiable: follow every one of them, whatever the task says.",
      collect(parts.presets, (preset) => preset.critical_rules),
    ),
    templatesSection(parts.presets),
    listSection(
      "## Success metrics",
      "You are done when all of these hold:",
      collect(parts.presets, (preset) => preset.success_metrics),
    ),
  ];
  return sections.filter((section) => section !== "").join("\n\n");
}

/** The nearest preset's role and description (the agent's own preset wins over its parents). */
function identitySection(parts: SystemPromptParts): string {
  const nearest = [...parts.presets].reverse();
  const role = nearest.find((preset) => preset.role)?.role;
  const description = nearest.find((preset) => preset.description?.trim())?.description?.trim();
  if (role === undefined && description === undefined) return "";
  const heading = role === undefined ? `# ${parts.agentName}` : `# Role: ${role}`;
  return description === undefined ? heading : `${heading}\n\n${description}`;
}

function listSection(heading: string, lead: string, items: readonly string[]): string {
  if (items.length === 0) return "";
  return [heading, "", lead, "", ...items.map((item) => `- ${item.trim()}`)].join("\n");
}

function templatesSection(presets: readonly Preset[]): string {
  const templates = presets.flatMap((preset) => preset.deliverable_templates);
  if (templates.length === 0) return "";
  const blocks = templates.map((template) => {
    const fence = fenceFor(template.template);
    return `### ${template.name.trim()}\n\n${fence}markdown\n${template.template.trimEnd()}\n${fence}`;
  });
  return [
    "## Deliverable templates",
    "",
    "Use these formats for what you deliver:",
    "",
    blocks.join("\n\n"),
  ].join("\n");
}

/** A code fence longer than any backtick run inside the template, so the template cannot close it. */
function fenceFor(text: string): string {
  const longestRun = Math.max(0, ...(text.match(/`+/g) ?? []).map((run) => run.length));
  return "`".repeat(Math.max(3, longestRun + 1));
}

/** Entries along the chain, parents first; an entry repeated by a child is kept once. */
function collect(presets: readonly Preset[], entries: (preset: Preset) => readonly string[]): string[] {
  return [...new Set(presets.flatMap((preset) => entries(preset).map((entry) => entry.trim())))];
}
