import { afterEach, describe, expect, it } from "vitest";
import { configWith, fixtureServer, mcpHarness } from "./mcp-test-kit.js";

const ALL = { tools: ["mcp:fixture/*"], permissions: { allow: ["mcp:fixture/*"] } };

let close: (() => Promise<void>) | undefined;
afterEach(async () => {
  await close?.();
  close = undefined;
});

describe("an MCP tool answering more than agentd reads at once", () => {
  it("fails the call saying the answer was too large and what to do, then starts the server again", async () => {
    const harness = mcpHarness(configWith({ fixture: fixtureServer() }));
    close = () => harness.source.close();

    const huge = await harness.call(ALL, "mcp__fixture__big", { megabytes: 11 });
    expect(huge).toMatchObject({ ok: false, code: "TOOL_FAILED" });
    expect(huge.output).toMatch(
      /^mcp:fixture\/big: the server sent a message larger than 10 MiB, more than agentd reads from an MCP server at once/,
    );

    const after = await harness.call(ALL, "mcp__fixture__echo", { text: "still here" });
    expect(after).toMatchObject({ ok: true, output: "echo: still here" });
  });

  it("passes a large answer under that size on, cut for the model", async () => {
    const harness = mcpHarness(configWith({ fixture: fixtureServer() }));
    close = () => harness.source.close();

    const large = await harness.call(ALL, "mcp__fixture__big", { megabytes: 2 });
    expect(large).toMatchObject({ ok: true, truncated: true });
    expect(large.output).toContain(`of ${2 * 1024 * 1024} bytes`);
  });
});
