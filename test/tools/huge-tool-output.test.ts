import { tmpdir } from "node:os";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { ConfigSchema } from "../../src/config/config-schema.js";
import { EventBus } from "../../src/events/event-bus.js";
import { createLogger } from "../../src/logging/logger.js";
import { RunControl } from "../../src/run-vocabulary/run-control.js";
import { SecretRedactor } from "../../src/secrets/secret-redactor.js";
import { DefaultToolExecutor } from "../../src/tools/default-tool-executor.js";
import { CompositeToolCatalog } from "../../src/tools/tool-catalog.js";
import { defineTool } from "../../src/tools/tool-definition.js";
import { EnvVault } from "../../src/vault/env-vault.js";
import { makeDefinition } from "../support/make-definition.js";
import { testSandboxHost } from "../support/test-sandbox.js";

const TOKEN = "tok-3f9a7c1e-live";
const MAX_OUTPUT_BYTES = 4_096;
/** An answer of 20 MB, mostly hex digits: what an MCP server dumping a blob sends. */
const BLOB = "b".repeat(20 * 1024 * 1024);

function executorAnswering(output: string, secrets: Record<string, string> = { token: TOKEN }) {
  const redactor = new SecretRedactor();
  for (const [name, value] of Object.entries(secrets)) redactor.add(name, value);
  const tool = defineTool({
    name: "dump",
    description: "answers with a lot",
    schema: z.strictObject({}),
    subject: () => ({ kind: "texts", texts: [] }),
    run: async () => ({ ok: true, output }),
  });
  const executor = new DefaultToolExecutor({
    catalog: new CompositeToolCatalog([tool]),
    approvals: { request: async () => ({ approved: false, state: "denied", scope: "once" }) },
    vault: new EnvVault({}),
    redactor,
    settings: ConfigSchema.parse({ tools: { max_output_bytes: MAX_OUTPUT_BYTES } }).tools,
    sandbox: testSandboxHost(tmpdir()),
    logger: createLogger({ level: "silent", pretty: false }),
  });
  return executor.execute(
    { callId: "call_1", tool: "dump", argumentsJson: "{}" },
    {
      runId: "r_test",
      definition: makeDefinition({ frontmatter: { tools: ["dump"], permissions: { allow: ["dump"] } } }),
      control: new RunControl(),
      events: new EventBus({ redact: redactor.redactEvent }),
      setStatus: () => undefined,
    },
  );
}

describe("a tool answering tens of megabytes", () => {
  it("shows the model the first bytes, secrets masked, with the whole output's size in the note", async () => {
    const result = await executorAnswering(`${TOKEN} ${BLOB}`);

    expect(result).toMatchObject({ ok: true, truncated: true });
    expect(result.output.startsWith("[secret:token] bbbb")).toBe(true);
    expect(result.output).toContain(
      `[output truncated: showing the first ${MAX_OUTPUT_BYTES} of ${TOKEN.length + 1 + BLOB.length} bytes`,
    );
  });
});

describe("a tool answering a secret many times, then its bytes across the masked part's end", () => {
  /** A long value (a key file's line): masked, each copy shrinks to a few characters. */
  const KEY = `K3y-${"abcdefghijklmnopqrstuvwxyz0123456789".repeat(8)}`;
  /** The key's bytes as a program lists them (`list(key.encode())`): masked as the key. */
  const listed = `[${[...Buffer.from(KEY)].join(", ")}]`;

  it("masks the list where it is cut as it would in the whole output", async () => {
    // Copies of the key up to some 40 characters before the end of the part read for the cut
    // (twice the budget and 4 KiB), so the list of its bytes runs across that end.
    const masked = MAX_OUTPUT_BYTES * 2 + 4_096;
    const copies = `${KEY}\n`.repeat(Math.floor((masked - 40) / (KEY.length + 1)));
    const output = `${copies}${"x".repeat(masked - 40 - copies.length)}${listed}\n${"done\n".repeat(20_000)}`;

    const result = await executorAnswering(output, { key: KEY });

    expect(result).toMatchObject({ ok: true, truncated: true });
    // Each byte of the key from its fourth on would give it away: none of them is shown in order.
    const shownBytes = result.output.match(/\d+(?:, \d+)+/g) ?? [];
    expect(shownBytes).toEqual([]);
    expect(result.output).toContain("[secret:key]");
  });
});
