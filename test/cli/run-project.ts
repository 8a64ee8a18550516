import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { startScriptedLlmServer, type ScriptedLlmServer } from "../support/scripted-llm-server.js";

/** A temp project for `agentd run`: a scripted LLM server, an agents folder and a config using both. */
export interface RunProject {
  server: ScriptedLlmServer;
  directory: string;
  close(): Promise<void>;
}

export async function createRunProject(prefix: string): Promise<RunProject> {
  const server = await startScriptedLlmServer();
  const directory = await mkdtemp(path.join(tmpdir(), prefix));
  await mkdir(path.join(directory, "agents"));
  await writeFile(
    path.join(directory, "config.yaml"),
    [
      "llm:",
      `  base_url: ${server.url}`,
      "  api_key: test-key",
      "  model: scripted",
      "  retries: { max_attempts: 1 }",
      `data_dir: ${path.join(directory, "data")}`,
      "log: { level: silent }",
    ].join("\n"),
  );
  return {
    server,
    directory,
    close: async () => {
      await server.close();
      await rm(directory, { recursive: true, force: true });
    },
  };
}
