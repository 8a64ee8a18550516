import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { loadConfig } from "../../src/config/load-config.js";
import { AgentdError } from "../../src/errors/agentd-error.js";

function configFile(text: string): string {
  const directory = mkdtempSync(path.join(tmpdir(), "agentd-config-"));
  const file = path.join(directory, "config.yaml");
  writeFileSync(file, text);
  return file;
}

function errorOf(run: () => unknown): AgentdError {
  try {
    run();
  } catch (error) {
    if (error instanceof AgentdError) return error;
    throw error;
  }
  throw new Error("expected an AgentdError");
}

describe("loadConfig", () => {
  it("starts on defaults when there is no config file, with the local Ollama endpoint", () => {
    const directory = mkdtempSync(path.join(tmpdir(), "agentd-config-"));
    const { config, file } = loadConfig({ cwd: directory, environment: {} });
    expect(file).toBeUndefined();
    expect(config.server.host).toBe("127.0.0.1");
    expect(config.events.buffer_size).toBe(200);
    expect(config.llm.base_url).toBe("http://127.0.0.1:11434/v1");
    expect(config.agents_dir).toBe(path.join(directory, "agents"));
  });

  it("expands ${VAR} and ${VAR:-default} and leaves {{secret:name}} for the vault", () => {
    const file = configFile(
      [
        "llm:",
        "  base_url: ${LLM_URL}",
        "  model: ${MODEL:-gpt-4o-mini}",
        '  api_key: "{{secret:openai}}"',
      ].join("\n"),
    );
    const { config } = loadConfig({ file, environment: { LLM_URL: "http://10.0.0.1:4000/v1" } });
    expect(config.llm.base_url).toBe("http://10.0.0.1:4000/v1");
    expect(config.llm.model).toBe("gpt-4o-mini");
    expect(config.llm.api_key).toBe("{{secret:openai}}");
  });

  it("rejects an unknown key with its path, its line and a did-you-mean", () => {
    const file = configFile(["server:", "  host: 0.0.0.0", "  prot: 8080"].join("\n"));
    const error = errorOf(() => loadConfig({ file, environment: {} }));
    expect(error.code).toBe("CONFIG_INVALID");
    expect(error.field).toBe("server.prot");
    expect(error.line).toBe(3);
    expect(error.message).toContain('did you mean "port"');
  });

  it("names the field and line of a wrong type", () => {
    const file = configFile(["concurrency: 2", "events:", "  buffer_size: lots"].join("\n"));
    const error = errorOf(() => loadConfig({ file, environment: {} }));
    expect(error.field).toBe("events.buffer_size");
    expect(error.line).toBe(3);
  });

  it("reports a YAML syntax error with its line", () => {
    const file = configFile(["server:", "  port: 1", "  host: [unclosed"].join("\n"));
    const error = errorOf(() => loadConfig({ file, environment: {} }));
    expect(error.message).toMatch(/invalid YAML/);
    expect(error.line).toBeGreaterThanOrEqual(3);
  });

  it("fails clearly when an explicit --config file is missing", () => {
    const error = errorOf(() => loadConfig({ file: "/nonexistent/agentd.yaml", environment: {} }));
    expect(error.code).toBe("CONFIG_NOT_FOUND");
  });
});
