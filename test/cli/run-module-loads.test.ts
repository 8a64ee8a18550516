import { spawn } from "node:child_process";
import { once } from "node:events";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, describe, expect, it } from "vitest";
import { startScriptedLlmServer, textReply, type ScriptedLlmServer } from "../support/scripted-llm-server.js";
import { createTempProject, type TempProject } from "../support/temp-project.js";

/** The built CLI (`npm run build` first, as `npm test` does). */
const BIN = path.resolve(import.meta.dirname, "../../bin/agentd.js");

/** Modules an `agentd run` of an LLM agent with no schedule, no shell call and no MCP server never needs. */
const NOT_NEEDED = [
  /node_modules\/fastify\//,
  /node_modules\/@fastify\//,
  /node_modules\/chokidar\//,
  /node_modules\/croner\//,
  /node_modules\/@modelcontextprotocol\//,
  /node_modules\/web-tree-sitter\//,
  /node_modules\/prom-client\//,
  /node_modules\/execa\//,
  /node_modules\/js-yaml\//,
  /\/src\/dashboard\//,
  /\/src\/api\/api-server\.ts$/,
  /\/src\/workers\/cli\/cli-worker\.ts$/,
];

/**
 * The modules a loaded file holds: a chunk of the CLI's bundle holds the src/ files and bundled
 * packages its source map lists (all of them compiled and run when it loads); any other file is
 * itself.
 */
function modulesIn(url: string): string[] {
  if (!url.startsWith("file:")) return [url];
  const file = fileURLToPath(url);
  if (!existsSync(`${file}.map`)) return [file];
  const map = JSON.parse(readFileSync(`${file}.map`, "utf8")) as { sources: string[] };
  return map.sources.map((source) => path.resolve(path.dirname(file), source));
}

/**
 * A module hook that appends the URL of every module loaded to a file: imported ES modules and
 * the CommonJS entry points they import (what those require in turn stays inside their package).
 */
function writeModuleTracer(directory: string, traceFile: string): string {
  const hooks = path.join(directory, "trace-hooks.mjs");
  writeFileSync(
    hooks,
    `import { appendFileSync } from "node:fs";
export async function load(url, context, next) {
  appendFileSync(${JSON.stringify(traceFile)}, url + "\\n");
  return next(url, context);
}
`,
  );
  const register = path.join(directory, "trace-register.mjs");
  writeFileSync(
    register,
    `import { register } from "node:module";\nregister(${JSON.stringify(`file://${hooks}`)});\n`,
  );
  return register;
}

describe("agentd run's start-up", () => {
  let server: ScriptedLlmServer | undefined;
  let project: TempProject | undefined;
  afterEach(async () => {
    await server?.close();
    project?.remove();
  });

  // A module hook slows every load: on a busy machine the run takes far longer than usual.
  it(
    "loads neither the daemon's server, watcher and scheduler nor tools the agent does not use",
    { timeout: 60_000 },
    async () => {
      server = await startScriptedLlmServer();
      project = createTempProject({
        config: {
          llm: { base_url: server.url, api_key: "test-key", model: "scripted", retries: { max_attempts: 1 } },
          log: { level: "silent" },
        },
      });
      project.writeAgent("writer", { task: "Say hi" });
      server.enqueue(textReply("hi"));
      const traceFile = path.join(project.root, "modules.txt");
      const register = writeModuleTracer(project.root, traceFile);
      const child = spawn(process.execPath, ["--import", register, BIN, "run", "writer"], {
        cwd: project.root,
        stdio: ["ignore", "pipe", "pipe"],
      });
      let output = "";
      child.stdout.setEncoding("utf8").on("data", (chunk: string) => (output += chunk));
      child.stderr.setEncoding("utf8").on("data", (chunk: string) => (output += chunk));
      const [code] = (await once(child, "exit")) as [number];
      expect(code, output).toBe(0);
      expect(output).toContain("hi");
      const loaded = readFileSync(traceFile, "utf8").trim().split("\n").flatMap(modulesIn);
      // The trace works: the run's own modules and the openai SDK are in it.
      expect(loaded.some((module) => module.endsWith("/src/cli/commands/run.ts"))).toBe(true);
      expect(loaded.some((module) => module.includes("/node_modules/openai/"))).toBe(true);
      const needless = loaded.filter((module) => NOT_NEEDED.some((pattern) => pattern.test(module)));
      expect(needless).toEqual([]);
    },
  );
});
