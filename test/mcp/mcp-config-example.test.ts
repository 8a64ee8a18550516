import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { parse as parseYaml } from "yaml";
import { configWith, mcpHarness } from "./mcp-test-kit.js";

const ROOT = path.resolve(import.meta.dirname, "../..");

/** config.example.yaml's commented `filesystem` MCP server, uncommented and parsed as written. */
function exampleServer(): Record<string, unknown> {
  const lines = readFileSync(path.join(ROOT, "config.example.yaml"), "utf8").split("\n");
  const start = lines.findIndex((line) => line.startsWith("#   filesystem:"));
  const end = lines.findIndex((line, index) => index > start && line.startsWith("#   tracker:"));
  expect(start).toBeGreaterThan(0);
  const block = lines
    .slice(start, end)
    .map((line) => line.replace(/^# /, ""))
    .join("\n");
  const parsed = parseYaml(block) as { filesystem: Record<string, unknown> };
  return parsed.filesystem;
}

/**
 * Why the npm registry cannot be reached from here, the way the sandbox's proxy reaches it (a direct
 * connection); undefined when it answers.
 */
async function registryUnreachable(): Promise<string | undefined> {
  try {
    await fetch("https://registry.npmjs.org/@modelcontextprotocol%2fserver-filesystem", {
      method: "HEAD",
      signal: AbortSignal.timeout(10_000),
    });
    return undefined;
  } catch (error) {
    const cause = (error as { cause?: { code?: string } }).cause?.code ?? (error as Error).message;
    return `registry.npmjs.org cannot be reached from this machine (${cause}): the example downloads its server from it`;
  }
}

// It downloads the server from the npm registry, as the example does (CI reaches npm's registry).
describe("config.example.yaml's MCP server", () => {
  let folder: string | undefined;
  afterEach(() => {
    if (folder) rmSync(folder, { recursive: true, force: true });
    // The server's own folder (the kit's project is the temp folder), with npx's cache in it.
    rmSync(path.join(tmpdir(), ".agentd", "mcp", "filesystem"), { recursive: true, force: true });
  });

  it(
    "starts in the sandbox as written and works on the folder it names",
    { timeout: 300_000 },
    async (context) => {
      const unreachable = await registryUnreachable();
      if (unreachable !== undefined) context.skip(unreachable);
      folder = mkdtempSync(path.join(tmpdir(), "agentd-mcp-example-"));
      const server = exampleServer();
      // The example's folder, here a temp one: the only change to the example.
      const text = JSON.stringify(server).replaceAll("/srv/project/notes", folder);
      // A server's start gets max(tools.http_timeout, 1 min): npx's download and the server's start in
      // the sandbox took over a minute at load 30 on 2 cores. The start's limit is not what this
      // checks; the example's server block stays as written.
      const config = configWith(
        { filesystem: JSON.parse(text) as Record<string, unknown> },
        { http_timeout: "3m" },
      );
      const harness = mcpHarness(config);
      try {
        const agent = { tools: ["mcp:filesystem/*"], permissions: { allow: ["mcp:filesystem/*"] } };
        const written = await harness.call(agent, "mcp:filesystem/write_file", {
          path: path.join(folder, "note.md"),
          content: "hello from the sandbox",
        });
        expect(written, JSON.stringify(written)).toMatchObject({ ok: true });
        expect(readFileSync(path.join(folder, "note.md"), "utf8")).toBe("hello from the sandbox");
      } finally {
        await harness.source.close();
      }
    },
  );
});
