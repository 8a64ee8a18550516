import { describe, expect, it } from "vitest";
import { ConfigSchema } from "../../src/config/config-schema.js";
import { protectConfigSecrets } from "../../src/secrets/protect-config-secrets.js";
import { SecretRedactor } from "../../src/secrets/secret-redactor.js";
import { cliEnvironment } from "../../src/workers/cli/cli-environment.js";

describe("config credentials", () => {
  it("masks credentials and hides them from children, and leaves placeholders and plain headers alone", () => {
    const githubToken = "ghp_4c1d9e0f7a2b";
    const bearer = "Bearer tracker-0a9f31";
    const config = ConfigSchema.parse({
      llm: { api_key: "ollama" },
      mcp_servers: {
        github: {
          command: "github-mcp",
          env: { GITHUB_PERSONAL_ACCESS_TOKEN: githubToken, LOG_LEVEL: "warning-level" },
        },
        tracker: {
          url: "https://tracker.example/mcp",
          headers: { Authorization: bearer, Accept: "application/json" },
        },
      },
    });
    const redactor = new SecretRedactor();
    protectConfigSecrets(config, redactor);

    expect(redactor.redact(`token ${githubToken} and ${bearer}`)).toBe(
      "token [secret:mcp_servers.github.GITHUB_PERSONAL_ACCESS_TOKEN] and [secret:mcp_servers.tracker.Authorization]",
    );
    expect(redactor.redact("run ollama with application/json at warning-level")).toBe(
      "run ollama with application/json at warning-level",
    );
    // A credential's value stays out even under a name a CLI may otherwise inherit.
    const inherited = cliEnvironment("codex", {
      OPENAI_API_KEY: githubToken,
      OPENAI_BASE_URL: "ollama",
      HOME: "/home/agent",
    });
    expect(inherited).toEqual({ OPENAI_BASE_URL: "ollama", HOME: "/home/agent" });
  });
});
