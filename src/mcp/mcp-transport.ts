import { randomUUID } from "node:crypto";
import { mkdir } from "node:fs/promises";
import { StringDecoder } from "node:string_decoder";
import { AgentdError } from "../errors/agentd-error.js";
import { prepareSandboxedChild } from "../sandbox/sandboxed-child.js";
import type { SandboxPolicy } from "../sandbox/sandbox-policy.js";
import { mcpServerEnvironment } from "./mcp-server-environment.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import type { McpServerConfig } from "../config/config-schema.js";
import type { Logger } from "../logging/logger.js";
import { PROCESS_MARKER_VARIABLE } from "../processes/find-tree-members.js";
import { ProcessTree } from "../processes/process-tree.js";
import { SandboxedStdioTransport } from "./sandboxed-stdio-transport.js";
import { StderrLines } from "./stderr-lines.js";

/** Last part of a stdio server's stderr kept for the message when it fails to start. */
const STDERR_TAIL_CHARACTERS = 2_000;

/** The SDK transport of one server, and what is left to end once the MCP client is closed. */
export interface McpTransport {
  transport: Transport;
  /** Where the server is, for messages: the command line or the URL. */
  where: string;
  /** What to check when the server cannot be reached. */
  hint: string;
  /** The end of what a stdio server wrote to stderr (empty for HTTP). */
  stderrTail(): string;
  /** Why agentd closed the connection itself, when it did (a stdio message too large to read). */
  closeReason(): string | undefined;
  /** Call before closing the client: notes a stdio server's descendants while it still runs. */
  noteProcesses(): Promise<void>;
  /** Call after closing the client: ends whatever is left of a stdio server's process tree. */
  endProcesses(): Promise<void>;
}

export interface McpTransportOptions {
  /** The server's key in config `mcp_servers`. */
  name: string;
  config: McpServerConfig;
  /** The sandbox of a stdio server; required for one. */
  sandbox: SandboxPolicy | undefined;
  /** SIGTERM → SIGKILL delay for leftovers of a stdio server's process tree. */
  killGraceMilliseconds: number;
  logger: Logger;
}

/**
 * A stdio transport (a child process, inside its sandbox) or a streamable HTTP transport, as the
 * config says. Rejects with SANDBOX_UNAVAILABLE when a stdio server's sandbox cannot be set up.
 */
export async function createMcpTransport(options: McpTransportOptions): Promise<McpTransport> {
  const { name, config } = options;
  if ("url" in config) {
    return {
      transport: new StreamableHTTPClientTransport(new URL(config.url), {
        requestInit: { headers: config.headers },
      }),
      where: config.url,
      hint: `check that ${config.url} is up and serves MCP over streamable HTTP (config mcp_servers.${name})`,
      stderrTail: () => "",
      closeReason: () => undefined,
      noteProcesses: async () => undefined,
      endProcesses: async () => undefined,
    };
  }
  if (options.sandbox === undefined) {
    throw new AgentdError("INTERNAL", `MCP server "${name}" has no sandbox policy`);
  }
  // Every process of the server inherits the marker, so a grandchild (`npx` → node) is found too.
  const marker = randomUUID();
  await mkdir(options.sandbox.workdir, { recursive: true });
  const prepared = await prepareSandboxedChild(options.sandbox, {
    command: config.command,
    arguments: config.args,
    workdir: options.sandbox.workdir,
    environment: { ...mcpServerEnvironment(), ...config.env, [PROCESS_MARKER_VARIABLE]: marker },
  });
  const transport = new SandboxedStdioTransport(prepared);
  let tail = "";
  // Whole lines only: the logger masks secret values within a line, not across two.
  const lines = new StderrLines(
    (line) => options.logger.debug({ server: name, stderr: line }, "MCP server stderr"),
    (characters) =>
      options.logger.debug(
        { server: name, stderr_line_characters: characters },
        "MCP server stderr line too long to log",
      ),
  );
  const decoder = new StringDecoder("utf8");
  transport.stderr.on("end", () => {
    lines.write(decoder.end());
    lines.end();
  });
  transport.stderr.on("data", (chunk: Buffer) => {
    const text = decoder.write(chunk);
    lines.write(text);
    const joined = tail + text;
    // A cut keeps whole lines only: a line cut at its start could begin inside a secret's value.
    tail =
      joined.length <= STDERR_TAIL_CHARACTERS ? joined : wholeLines(joined.slice(-STDERR_TAIL_CHARACTERS));
  });
  let tree: ProcessTree | undefined;
  const commandLine = [config.command, ...config.args].join(" ");
  return {
    transport,
    where: commandLine,
    hint: `check that \`${commandLine}\` runs on this machine and speaks MCP over stdio (config mcp_servers.${name})`,
    stderrTail: () => tail,
    closeReason: () => transport.closeReason,
    noteProcesses: async () => {
      const pid = transport.pid;
      if (pid !== null) tree ??= new ProcessTree(pid, marker);
      await tree?.collect();
    },
    endProcesses: async () => {
      await tree?.terminate(options.killGraceMilliseconds);
      await prepared.release();
    },
  };
}

/** `text` from its first whole line: what follows its first line break (nothing without one). */
function wholeLines(text: string): string {
  const lineBreak = text.indexOf("\n");
  return lineBreak === -1 ? "" : text.slice(lineBreak + 1);
}
