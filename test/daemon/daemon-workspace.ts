import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { stringify } from "yaml";

/** A temp folder with config.yaml, agents/, presets/ and data/ for one black-box test. */
export interface DaemonWorkspace {
  root: string;
  configFile: string;
  dataDirectory: string;
  /** Writes `agents/<id>.md` with this frontmatter (description added) and a short body. */
  writeAgent(id: string, frontmatter: Record<string, unknown>): void;
  removeAgent(id: string): void;
}

/** Creates the workspace; `config` is merged over a config pointing the LLM at `llmUrl`. */
export function createWorkspace(llmUrl: string, config: Record<string, unknown> = {}): DaemonWorkspace {
  const root = mkdtempSync(path.join(tmpdir(), "agentd-daemon-"));
  const agentsDirectory = path.join(root, "agents");
  mkdirSync(agentsDirectory);
  mkdirSync(path.join(root, "presets"));
  const configFile = path.join(root, "config.yaml");
  writeFileSync(
    configFile,
    stringify({
      agents_dir: "./agents",
      presets_dir: "./presets",
      data_dir: "./data",
      server: { host: "127.0.0.1", port: 0 },
      llm: { base_url: llmUrl, api_key: "test-key", model: "scripted" },
      log: { level: "info", pretty: false },
      ...config,
    }),
  );
  const agentFile = (id: string) => path.join(agentsDirectory, `${id}.md`);
  return {
    root,
    configFile,
    dataDirectory: path.join(root, "data"),
    writeAgent: (id, frontmatter) =>
      writeFileSync(
        agentFile(id),
        `---\n${stringify({ description: `${id} for black-box tests`, ...frontmatter })}---\nDo the task you are given.\n`,
      ),
    removeAgent: (id) => rmSync(agentFile(id)),
  };
}

export { waitFor } from "../support/wait-for.js";
