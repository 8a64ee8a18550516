import { Writable } from "node:stream";
import type { FastifyBaseLogger } from "fastify";
import { describe, expect, it } from "vitest";
import { startApiServer } from "../../src/api/api-server.js";
import { requestSharedLogger } from "../../src/api/request-logger.js";
import { EventBus } from "../../src/events/event-bus.js";
import { createLogger } from "../../src/logging/logger.js";
import { FixedAgents, agentDetail } from "./api-fixture.js";

/** A logger at `level` whose lines are kept, parsed. */
function keptLogger(level = "info") {
  const lines: Record<string, unknown>[] = [];
  const destination = new Writable({
    write(chunk: Buffer, _encoding, done) {
      for (const line of chunk.toString("utf8").split("\n").filter(Boolean)) lines.push(JSON.parse(line));
      done();
    },
  });
  return { logger: createLogger({ level, pretty: false, destination }), lines };
}

describe("requestSharedLogger", () => {
  it("gives a request's child as itself, and any other child as a real one", () => {
    const { logger, lines } = keptLogger();
    const shared = requestSharedLogger(logger as FastifyBaseLogger);
    expect(shared.child({ reqId: "req-1" }, {})).toBe(shared);
    const module = shared.child({ module: "api" });
    expect(module).not.toBe(shared);
    expect(shared.child({ reqId: "req-2" }, { level: "debug" })).not.toBe(shared);
    shared.info("from the shared logger");
    module.info("from a module");
    expect(lines.map((line) => [line["msg"], line["module"]])).toEqual([
      ["from the shared logger", undefined],
      ["from a module", "api"],
    ]);
  });
});

describe("the API's request logger", () => {
  it("logs a request that failed in the daemon's log", async () => {
    const { logger, lines } = keptLogger();
    const agents = new FixedAgents(agentDetail("writer"));
    agents.list = () => {
      throw new Error("the agents are not there");
    };
    const bus = new EventBus();
    const unused = () => {
      throw new Error("not used");
    };
    const server = await startApiServer(
      {
        agents,
        runs: { list: () => [], get: () => undefined, queueDepth: () => 0 },
        approvals: { list: () => [], decide: unused },
        events: { followsEveryAgent: true },
        bus,
        health: { version: "test", startedAt: new Date() },
      } as unknown as Parameters<typeof startApiServer>[0],
      { host: "127.0.0.1", port: 0, logger },
    );
    try {
      const response = await fetch(`${server.url}/agents`);
      expect(response.status).toBe(500);
      const failed = lines.find((line) => line["msg"] === "request failed");
      expect(failed).toMatchObject({ url: "/agents", err: { message: "the agents are not there" } });
    } finally {
      await server.close();
    }
  });
});
