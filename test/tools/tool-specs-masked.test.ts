import { describe, expect, it } from "vitest";
import { ConfigSchema } from "../../src/config/config-schema.js";
import { createLogger } from "../../src/logging/logger.js";
import { SecretRedactor } from "../../src/secrets/secret-redactor.js";
import { builtinTools } from "../../src/tools/builtin/builtin-tools.js";
import { DefaultToolExecutor } from "../../src/tools/default-tool-executor.js";
import { CompositeToolCatalog, type ToolSource } from "../../src/tools/tool-catalog.js";
import type { ToolDefinition } from "../../src/tools/tool-definition.js";
import { EnvVault } from "../../src/vault/env-vault.js";
import { makeDefinition } from "../support/make-definition.js";
import { testSandboxHost } from "../support/test-sandbox.js";

const FIRST = "first-Secret-5b7d2e90";
const LATER = "later-Secret-c81f04a6";

/** An MCP server's tool as it listed it: its description and a parameter's quote two values. */
const listed: ToolDefinition = {
  name: "mcp:srv/deploy",
  description: `Deploys with ${FIRST}`,
  parameters: {
    type: "object",
    properties: { target: { type: "string", description: `one of prod, ${LATER}` } },
  },
  parse: (input) => ({ ok: true, value: input }),
  subject: () => ({ kind: "texts", texts: [] }),
  run: async () => ({ ok: true, output: "" }),
};

const source: ToolSource = {
  owns: (name) => name.startsWith("mcp:"),
  find: async (name) => (name === listed.name ? listed : undefined),
  expand: async () => [listed],
};

describe("the tools' specs the model reads", () => {
  it("mask a vault value an MCP server wrote, and one learned since they were last listed", async () => {
    const redactor = new SecretRedactor();
    redactor.add("first", FIRST);
    const executor = new DefaultToolExecutor({
      catalog: new CompositeToolCatalog(builtinTools(), [source]),
      approvals: { request: async () => ({ approved: false, state: "denied", scope: "once" }) },
      vault: new EnvVault({}),
      redactor,
      settings: ConfigSchema.parse({}).tools,
      sandbox: testSandboxHost("/tmp"),
      logger: createLogger({ level: "silent", pretty: false }),
    });
    const definition = makeDefinition({ frontmatter: { tools: ["mcp:srv/*"] } });

    const [before] = await executor.specs(definition);
    expect(before?.description).toBe("Deploys with [secret:first]");
    expect(JSON.stringify(before?.parameters)).toContain(LATER);

    redactor.add("later", LATER);
    const [after] = await executor.specs(definition);
    expect(after?.description).toBe("Deploys with [secret:first]");
    expect(JSON.stringify(after?.parameters)).toContain("one of prod, [secret:later]");
    expect(JSON.stringify(after)).not.toContain(LATER);
    // The listing itself is left as the server gave it.
    expect(listed.description).toBe(`Deploys with ${FIRST}`);
  });
});
