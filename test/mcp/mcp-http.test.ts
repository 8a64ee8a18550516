import { randomUUID } from "node:crypto";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { z } from "zod";
import { AgentdError } from "../../src/errors/agentd-error.js";
import { makeDefinition } from "../support/make-definition.js";
import { configWith, mcpHarness } from "./mcp-test-kit.js";

const TOKEN = "http-fixture-token";
const ECHO = { tools: ["mcp:remote/echo"], permissions: { allow: ["mcp:remote/*"] } };

/** A real streamable HTTP MCP server on 127.0.0.1 that wants a bearer token. */
async function startHttpServer(): Promise<{ url: string; server: Server }> {
  const sessions = new Map<string, StreamableHTTPServerTransport>();
  const server = createServer((request, response) => {
    if (request.headers.authorization !== `Bearer ${TOKEN}`) {
      response.writeHead(401).end();
      return;
    }
    const sessionId = request.headers["mcp-session-id"];
    const transport = typeof sessionId === "string" ? sessions.get(sessionId) : undefined;
    if (!transport) {
      const created: StreamableHTTPServerTransport = new StreamableHTTPServerTransport({
        sessionIdGenerator: () => randomUUID(),
        onsessioninitialized: (id) => {
          sessions.set(id, created);
        },
      });
      const mcp = new McpServer({ name: "remote", version: "1.0.0" });
      mcp.registerTool(
        "echo",
        { description: "Returns the text it is given", inputSchema: { text: z.string() } },
        async ({ text }) => ({ content: [{ type: "text", text: `remote echo: ${text}` }] }),
      );
      mcp.registerTool("picture", { description: "Returns an image" }, async () => ({
        content: [
          { type: "text", text: "here it is" },
          { type: "image", data: Buffer.from("not really a png").toString("base64"), mimeType: "image/png" },
        ],
      }));
      void mcp.connect(created).then(() => created.handleRequest(request, response));
      return;
    }
    void transport.handleRequest(request, response);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return { url: `http://127.0.0.1:${port}/mcp`, server };
}

let http: { url: string; server: Server };
let closeSource: (() => Promise<void>) | undefined;
beforeEach(async () => {
  http = await startHttpServer();
});
afterEach(async () => {
  await closeSource?.();
  closeSource = undefined;
  http.server.closeAllConnections();
  await new Promise((resolve) => http.server.close(resolve));
});

function harness(headers: Record<string, string>) {
  const made = mcpHarness(configWith({ remote: { url: http.url, headers } }));
  closeSource = () => made.source.close();
  return made;
}

describe("McpToolSource over streamable HTTP", () => {
  it("lists and calls the server's tools, sending the configured headers", async () => {
    const { executor, call } = harness({ Authorization: `Bearer ${TOKEN}` });
    const specs = await executor.specs(makeDefinition({ frontmatter: { tools: ["mcp:remote/*"] } }));
    expect(specs.map((spec) => spec.name).sort()).toEqual(["mcp__remote__echo", "mcp__remote__picture"]);
    expect(await call(ECHO, "mcp__remote__echo", { text: "over http" })).toMatchObject({
      ok: true,
      output: "remote echo: over http",
    });
    const picture = await call(
      { tools: ["mcp:remote/picture"], permissions: { allow: ["mcp:remote/*"] } },
      "mcp__remote__picture",
      {},
    );
    expect(picture.output).toBe("here it is\n[image image/png, 16 bytes]");
  });

  it("says which server refused and what to check when the headers are wrong", async () => {
    const { executor } = harness({ Authorization: "Bearer wrong" });
    const failure = await executor
      .specs(makeDefinition({ frontmatter: { tools: ["mcp:remote/*"] } }))
      .catch((error: unknown) => error);
    expect(AgentdError.is(failure, "MCP_UNAVAILABLE")).toBe(true);
    expect((failure as AgentdError).describe()).toContain(`MCP server "remote" (${http.url})`);
    expect((failure as AgentdError).describe()).toContain("streamable HTTP");
  });
});
