import { readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { writeModuleTracer } from "../support/module-tracer.js";
import { useTestKit } from "../support/test-kit.js";

const kit = useTestKit();

/** What the bundle holds, one path a line, as esbuild's metafile lists it (scripts/bundle-cli.mjs). */
const MAIN_BUNDLE_MODULES = path.resolve(import.meta.dirname, "../../dist/cli/main-command.modules.txt");

/** Nothing listens there: the start-up probe of the model server finds no one, as on a first start. */
const NO_LLM = "http://127.0.0.1:9/v1";

/**
 * The packages dist/cli/main-command.cjs leaves in node_modules (scripts/bundle-cli.mjs,
 * MAIN_EXTERNAL_PACKAGES): each loaded only for a feature its config turns on or an agent uses
 * (email and POST deliveries, `http_request`, traces, the PostgreSQL store, the keychain, the shell
 * tool's parser, /docs). A start loads none of them, and no other package from node_modules: those
 * are in the bundle, whose compiled code is cached (one package found, read and compiled from
 * node_modules costs more than the same code from the bundle's code cache).
 */
const LEFT_OUT_OF_THE_BUNDLE = [
  "nodemailer",
  "undici",
  "pg",
  "@opentelemetry/sdk-trace-base",
  "@opentelemetry/exporter-trace-otlp-proto",
  "@opentelemetry/resources",
  "@napi-rs/keyring",
  "web-tree-sitter",
  "@fastify/swagger",
  "@fastify/swagger-ui",
];

/** The modules of tsc's output the entry `node dist/cli/main.js` loads before it hands over to the bundle. */
const ENTRY_MODULES = [
  "main.js",
  "command-bundle.js",
  "code-cache.js",
  "requested-command.js",
  "source-mapped-stacks.js",
];

describe("agentd start's module loads", () => {
  // A module hook slows every load: on a busy machine the start takes far longer than usual.
  it(
    "runs from its bundle and loads no package from node_modules, from start to stop",
    { timeout: 90_000 },
    async () => {
      const project = kit.project({ llmUrl: NO_LLM });
      project.writeAgent("writer", { task: "Say hi" });
      const traceFile = path.join(project.root, "modules.txt");
      const register = writeModuleTracer(project.root, traceFile);
      const daemon = await kit.daemon(project.configFile, {
        environment: { NODE_OPTIONS: `--import ${register}` },
        readyTimeoutMilliseconds: 60_000,
      });
      expect((await daemon.request("GET", "/agents")).status).toBe(200);
      daemon.signal("SIGTERM");
      expect(await daemon.exited).toEqual({ code: 0, signal: null });
      const loaded = readFileSync(traceFile, "utf8").trim().split("\n");
      // The trace works: it saw the entry (an ES module) and the built-ins the bundle requires.
      expect(loaded.some((module) => module.endsWith("/dist/cli/main.js"))).toBe(true);
      expect(loaded).toContain("node:fs");
      // main.js hands over to the bundle: no other module of tsc's output is loaded.
      const fromDist = loaded
        .filter((module) => /\/dist\/[^/]+\/.*\.js$/.test(module))
        .map((module) => module.replace(/^.*\/dist\//, ""));
      expect(fromDist.filter((module) => !ENTRY_MODULES.includes(module.replace(/^cli\//, "")))).toEqual([]);
      expect(loaded.filter((module) => module.includes("/node_modules/"))).toEqual([]);
      // What the bundle holds: the daemon's server and the propagator's one file, not the
      // packages it leaves out.
      const bundled = readFileSync(MAIN_BUNDLE_MODULES, "utf8").trim().split("\n");
      expect(bundled.some((module) => module.includes("node_modules/fastify/"))).toBe(true);
      expect(bundled.some((module) => module.endsWith("/W3CTraceContextPropagator.js"))).toBe(true);
      const leftOut = bundled.filter((module) =>
        LEFT_OUT_OF_THE_BUNDLE.some((name) => module.includes(`node_modules/${name}/`)),
      );
      expect(leftOut).toEqual([]);
    },
  );
});
