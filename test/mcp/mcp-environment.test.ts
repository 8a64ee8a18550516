import { getDefaultEnvironment } from "@modelcontextprotocol/sdk/client/stdio.js";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { configWith, fixtureServer, mcpHarness } from "./mcp-test-kit.js";

const ALL = { tools: ["mcp:fixture/*"], permissions: { allow: ["mcp:fixture/*"] } };

/** Secrets a daemon's environment typically holds: none may reach an MCP server unless configured. */
const DAEMON_SECRETS: Record<string, string> = {
  AWS_SECRET_ACCESS_KEY: "aws-secret-7c1e",
  DATABASE_URL: "postgres://agentd:db-password-41f2@127.0.0.1/agentd",
  OPENAI_API_KEY: "openai-key-8d2c",
  ANTHROPIC_API_KEY: "anthropic-key-3a9b",
  GITHUB_TOKEN: "ghp_daemon_9b3d",
  AGENTD_TOKEN: "api-token-0d4e",
};

const saved: Record<string, string | undefined> = {};
beforeAll(() => {
  for (const [name, value] of Object.entries(DAEMON_SECRETS)) {
    saved[name] = process.env[name];
    process.env[name] = value;
  }
});
afterAll(() => {
  for (const [name, value] of Object.entries(saved)) {
    if (value === undefined) delete process.env[name];
    else process.env[name] = value;
  }
});

let close: (() => Promise<void>) | undefined;
afterEach(async () => {
  await close?.();
  close = undefined;
});

describe("the environment of a stdio MCP server", () => {
  it("is the MCP SDK's default set and the server's configured env, nothing else of the daemon's", async () => {
    const harness = mcpHarness(
      configWith({ fixture: fixtureServer([], { GITHUB_TOKEN: "configured-token", LOG_LEVEL: "debug" }) }),
    );
    close = () => harness.source.close();

    const listed = await harness.call(ALL, "mcp__fixture__env_names", {});
    expect(listed.ok).toBe(true);
    const names = JSON.parse(listed.output) as string[];
    const safe = Object.keys(getDefaultEnvironment());
    expect(safe).toContain("PATH");
    // The safe set, the configured env, agentd's process marker; bubblewrap sets PWD.
    const expected = [...safe, "GITHUB_TOKEN", "LOG_LEVEL", "PROCESS_TREE_MARKER", "PWD"].sort();
    expect(names).toEqual(expected);

    // A configured variable wins over the daemon's of the same name.
    expect((await harness.call(ALL, "mcp__fixture__env", { name: "GITHUB_TOKEN" })).output).toBe(
      "configured-token",
    );
    for (const name of ["AWS_SECRET_ACCESS_KEY", "DATABASE_URL", "OPENAI_API_KEY", "AGENTD_TOKEN"]) {
      expect((await harness.call(ALL, "mcp__fixture__env", { name })).output).toBe("(unset)");
    }
  });

  it("gets agentd's proxy variables when its sandbox lists hosts", async () => {
    const server = {
      ...fixtureServer(),
      sandbox: { ...fixtureServer().sandbox, network: ["api.example.com"] },
    };
    const harness = mcpHarness(configWith({ fixture: server }));
    close = () => harness.source.close();
    const names = JSON.parse((await harness.call(ALL, "mcp__fixture__env_names", {})).output) as string[];
    expect(names).toEqual(expect.arrayContaining(["HTTPS_PROXY", "HTTP_PROXY", "ALL_PROXY", "NO_PROXY"]));
    expect((await harness.call(ALL, "mcp__fixture__env", { name: "HTTPS_PROXY" })).output).toBe(
      "http://127.0.0.1:3128",
    );
    expect(names).not.toContain("DATABASE_URL");
  });
});
