import { describe, expect, it } from "vitest";
import type { Config } from "../../../src/config/config-schema.js";
import { cliToolRules } from "../../../src/workers/cli/cli-tool-rules.js";
import { resolveAdapter } from "../../../src/workers/cli/resolve-adapter.js";

const CLI_TOOLS: Config["cli_tools"] = {
  claude: { command: "/opt/claude", output: "text", env: {} },
  aider: { command: "aider", args: ["--message", "{task}"], output: "text", env: {} },
  "claude-like": { output: "claude", env: {} },
};

describe("cliToolRules", () => {
  it("says what the tool's adapter says, without loading it", () => {
    for (const tool of ["claude", "gemini", "codex", "aider", "claude-like"]) {
      const adapter = resolveAdapter(tool, CLI_TOOLS);
      expect(cliToolRules(tool, CLI_TOOLS), tool).toEqual({
        tool: adapter.tool,
        defaultModel: adapter.defaultModel,
        ruleSupport: adapter.ruleSupport,
      });
    }
  });

  it("knows no tool resolveAdapter refuses", () => {
    expect(() => resolveAdapter("nothing", CLI_TOOLS)).toThrow();
    expect(cliToolRules("nothing", CLI_TOOLS)).toBeUndefined();
    expect(cliToolRules("toString", CLI_TOOLS)).toBeUndefined();
  });
});
