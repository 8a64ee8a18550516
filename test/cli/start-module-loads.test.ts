import { readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { writeModuleTracer } from "../support/module-tracer.js";
import { useTestKit } from "../support/test-kit.js";

const kit = useTestKit();

/** Nothing listens there: the start-up probe of the model server finds no one, as on a first start. */
const NO_LLM = "http://127.0.0.1:9/v1";

/**
 * Packages a daemon loads only for a feature its config turns on or an agent uses: email and POST
 * deliveries, `http_request`, traces, the PostgreSQL store, MCP servers. The W3C propagator every
 * start needs is one file of @opentelemetry/core, not the package's index.
 */
const LOADED_ON_USE = [
  /node_modules\/nodemailer\//,
  /node_modules\/undici\//,
  /node_modules\/pg\//,
  /node_modules\/@opentelemetry\/(exporter-|otlp-|sdk-|resources\/)/,
  /node_modules\/@opentelemetry\/core\/build\/src\/index\.js$/,
  /node_modules\/@modelcontextprotocol\//,
];

describe("agentd start's module loads", () => {
  // A module hook slows every load: on a busy machine the start takes far longer than usual.
  it(
    "loads no package of a feature the config leaves off, from start to stop",
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
      // The trace works: it saw the daemon's server and the propagator's own file.
      expect(loaded.some((module) => module.includes("/node_modules/fastify/"))).toBe(true);
      expect(loaded.some((module) => module.endsWith("/W3CTraceContextPropagator.js"))).toBe(true);
      const needless = loaded.filter((module) => LOADED_ON_USE.some((pattern) => pattern.test(module)));
      expect(needless).toEqual([]);
    },
  );
});
