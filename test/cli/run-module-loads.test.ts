import { readFileSync } from "node:fs";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { agentdBin } from "../support/agentd-cli.js";
import { startScriptedLlmServer, textReply, type ScriptedLlmServer } from "../support/scripted-llm-server.js";
import { createTempProject, type TempProject } from "../support/temp-project.js";
import { writeModuleTracer } from "../support/module-tracer.js";

/** `agentd run` bundled alone: agentd's modules and the packages it bundles are inside. */
const RUN_BUNDLE = path.resolve(import.meta.dirname, "../../dist/cli/run-command.cjs");
/** What the bundle holds, one path a line, as esbuild's metafile lists it (scripts/bundle-cli.mjs). */
const RUN_BUNDLE_MODULES = path.resolve(import.meta.dirname, "../../dist/cli/run-command.modules.txt");

/**
 * Packages an `agentd run` of an LLM agent with no schedule, no shell call and no MCP server never
 * needs: neither loaded from node_modules nor bundled.
 */
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
  /node_modules\/@opentelemetry\/(exporter-|otlp-|sdk-|resources\/)/,
  /node_modules\/nodemailer\//,
];

/** agentd's modules `agentd run` has no use for at all: the daemon's server, dashboard and watcher. */
const NOT_BUNDLED = [
  "src/api/api-server.ts",
  "src/api/routes/",
  "src/dashboard/",
  "src/app/daemon.ts",
  "src/definitions/definition-watcher.ts",
];

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
      const { exitCode, all } = await agentdBin(["run", "writer"], {
        cwd: project.root,
        nodeArguments: ["--import", register],
      });
      expect(exitCode, all).toBe(0);
      expect(all).toContain("hi");
      const loaded = readFileSync(traceFile, "utf8").trim().split("\n");
      // The trace works: it saw the bin, and the built-ins required.
      expect(loaded.some((module) => module.endsWith("/bin/agentd.js"))).toBe(true);
      expect(loaded).toContain("node:fs");
      // The bin sends `agentd run` to its bundle: main.js and its chunks (ES modules) stay unloaded.
      expect(loaded.some((module) => module.endsWith("/dist/cli/launch.cjs"))).toBe(true);
      expect(loaded.filter((module) => /\/dist\/(cli\/main\.js|chunks\/)/.test(module))).toEqual([]);
      // Every package the run needs is in its bundle: one found, read and compiled from
      // node_modules costs far more than the same code from the bundle's code cache
      // (scripts/bundle-cli.mjs, RUN_BUNDLED_PACKAGES).
      expect(loaded.filter((module) => module.includes("/node_modules/"))).toEqual([]);

      // The build lists the bundle's modules beside it, relative to the root (node_modules
      // through a link: the path to where it points).
      const bundled = readFileSync(RUN_BUNDLE_MODULES, "utf8")
        .trim()
        .split("\n")
        .map((module) => module.replace(/^.*?(?=node_modules\/)/, ""));
      expect(bundled).toContain("src/cli/commands/run.ts");
      expect(bundled.filter((module) => NOT_BUNDLED.some((prefix) => module.startsWith(prefix)))).toEqual([]);
      expect(bundled.filter((module) => NOT_NEEDED.some((pattern) => pattern.test(module)))).toEqual([]);
      // The check sees the bundled packages.
      expect(bundled.some((module) => module.startsWith("node_modules/zod/"))).toBe(true);
    },
  );

  it("is an ASCII file, which the code cache reads as Latin-1", () => {
    const bytes = readFileSync(RUN_BUNDLE);
    expect(bytes.findIndex((byte) => byte > 0x7f)).toBe(-1);
  });
});
