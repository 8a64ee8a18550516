import { describe, expect, it } from "vitest";
import { assembleSystemPrompt } from "../../src/prompt/assemble-system-prompt.js";
import { type Preset, PresetSchema } from "../../src/presets/preset-schema.js";

const preset = (value: Record<string, unknown>): Preset => PresetSchema.parse(value);

describe("assembleSystemPrompt", () => {
  it("is the instructions alone when the agent has no preset", () => {
    expect(
      assembleSystemPrompt({ agentName: "Notes", instructions: "\nWrite notes.\n\n", presets: [] }),
    ).toBe("Write notes.");
  });

  it("orders role and description, instructions, then rules, templates and metrics, parents first", () => {
    const base = preset({
      role: "Reviewer",
      description: "Reviews changes",
      critical_rules: ["Quote file and line"],
      success_metrics: ["Every finding has a fix"],
    });
    const security = preset({
      role: "Security Analyst",
      description: "Reviews code for security risks",
      extends: "base",
      critical_rules: ["Never recommend disabling TLS", "Quote file and line"],
      deliverable_templates: [{ name: "Audit report", template: "## Summary\n## Findings\n" }],
      success_metrics: ["No critical vulnerability unreported"],
    });
    const prompt = assembleSystemPrompt({
      agentName: "Auditor",
      instructions: "Audit the repository.\n",
      presets: [base, security],
    });
    expect(prompt).toBe(
      [
        "# Role: Security Analyst",
        "",
        "Reviews code for security risks",
        "",
        "Audit the repository.",
        "",
        "## Critical rules",
        "",
        "These rules are non-negotiable: follow every one of them, whatever the task says.",
        "",
        "- Quote file and line",
        "- Never recommend disabling TLS",
        "",
        "## Deliverable templates",
        "",
        "Use these formats for what you deliver:",
        "",
        "### Audit report",
        "",
        "```markdown",
        "## Summary",
        "## Findings",
        "```",
        "",
        "## Success metrics",
        "",
        "You are done when all of these hold:",
        "",
        "- Every finding has a fix",
        "- No critical vulnerability unreported",
      ].join("\n"),
    );
  });

  it("takes the role from a parent when the agent's preset has none, and leaves out empty sections", () => {
    const prompt = assembleSystemPrompt({
      agentName: "Digest",
      instructions: "Summarise.",
      presets: [preset({ role: "Writer" }), preset({ success_metrics: ["Readable in 30 seconds"] })],
    });
    expect(prompt).toBe(
      "# Role: Writer\n\nSummarise.\n\n## Success metrics\n\nYou are done when all of these hold:\n\n- Readable in 30 seconds",
    );
  });

  it("heads a description without a role with the agent's name", () => {
    const prompt = assembleSystemPrompt({
      agentName: "Digest",
      instructions: "Summarise.",
      presets: [preset({ description: "Keeps the team informed" })],
    });
    expect(prompt).toBe("# Digest\n\nKeeps the team informed\n\nSummarise.");
  });

  it("fences a template containing a code fence with a longer fence", () => {
    const prompt = assembleSystemPrompt({
      agentName: "Docs",
      instructions: "",
      presets: [preset({ deliverable_templates: [{ name: "Snippet", template: "```js\ncode()\n```" }] })],
    });
    expect(prompt).toBe(
      "## Deliverable templates\n\nUse these formats for what you deliver:\n\n### Snippet\n\n````markdown\n```js\ncode()\n```\n````",
    );
  });
});
