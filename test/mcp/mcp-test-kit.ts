import { readFileSync, readdirSync } from "node:fs";
import { tmpdir } from "node:os";
import { fileURLToPath } from "node:url";
import { ConfigSchema, type Config } from "../../src/config/config-schema.js";
import type { AgentEvent } from "../../src/events/agent-event.js";
import { EventBus } from "../../src/events/event-bus.js";
import { createLogger } from "../../src/logging/logger.js";
import { isProcessRunning } from "../../src/processes/process-tree.js";
import { McpToolSource } from "../../src/mcp/mcp-tool-source.js";
import { RunControl } from "../../src/run-vocabulary/run-control.js";
import { SecretRedactor } from "../../src/secrets/secret-redactor.js";
import { DefaultToolExecutor } from "../../src/tools/default-tool-executor.js";
import { CompositeToolCatalog } from "../../src/tools/tool-catalog.js";
import type { ToolResult } from "../../src/tools/tool-executor.js";
import { EnvVault } from "../../src/vault/env-vault.js";
import { makeDefinition } from "../support/make-definition.js";
import { testSandboxHost } from "../support/test-sandbox.js";

/** The stdio fixture server, run with the same node as the tests. */
export const FIXTURE_SERVER = fileURLToPath(new URL("../fixtures/mcp/fixture-server.mjs", import.meta.url));

/** The repository: the fixture script and the node_modules it imports from. */
const REPOSITORY = fileURLToPath(new URL("../..", import.meta.url));

/**
 * Config `mcp_servers.fixture` for the stdio fixture; `args` are added after the script. The
 * repository is made visible to its sandbox: a clone under /tmp would otherwise be hidden by the
 * sandbox's private /tmp, as any server script in a hidden folder is.
 */
export function fixtureServer(args: string[] = [], env: Record<string, string> = {}) {
  return { command: process.execPath, args: [FIXTURE_SERVER, ...args], env, sandbox: { read: [REPOSITORY] } };
}

/** A config with these servers, parsed by the real schema. */
export function configWith(servers: Record<string, unknown>, tools: Record<string, unknown> = {}): Config {
  return ConfigSchema.parse({ mcp_servers: servers, tools, cli: { kill_grace: 1_000 } });
}

/** The real executor over built-ins-less catalog + the MCP source, and a way to make calls. */
export function mcpHarness(
  config: Config,
  redactor = new SecretRedactor(),
  logger = createLogger({ level: "silent", pretty: false }),
) {
  const sandbox = testSandboxHost(tmpdir());
  const source = McpToolSource.fromConfig(config, sandbox, logger);
  const executor = new DefaultToolExecutor({
    catalog: new CompositeToolCatalog([], [source]),
    approvals: { request: async () => ({ approved: false, state: "denied", scope: "once" }) },
    vault: new EnvVault({}),
    redactor,
    settings: config.tools,
    sandbox,
    logger,
  });
  const events: AgentEvent[] = [];
  const bus = new EventBus();
  bus.subscribe((event) => events.push(event));
  let callNumber = 0;

  /** Calls `tool` (the model's name for it) as an agent with these frontmatter fields. */
  const call = async (
    frontmatter: Record<string, unknown>,
    tool: string,
    input: unknown,
    control = new RunControl(),
  ): Promise<ToolResult> => {
    try {
      return await executor.execute(
        { callId: `call_${++callNumber}`, tool, argumentsJson: JSON.stringify(input) },
        {
          runId: "r_test",
          definition: makeDefinition({ frontmatter }),
          control,
          events: bus,
          setStatus: () => undefined,
        },
      );
    } finally {
      control.dispose();
    }
  };
  return { source, executor, events, call };
}

/** Live processes whose command line holds `text`. */
export function processesWith(text: string): number[] {
  return readdirSync("/proc")
    .filter((entry) => /^\d+$/.test(entry))
    .filter((entry) => {
      try {
        return (
          readFileSync(`/proc/${entry}/cmdline`, "utf8").includes(text) && isProcessRunning(Number(entry))
        );
      } catch {
        return false;
      }
    })
    .map(Number);
}
