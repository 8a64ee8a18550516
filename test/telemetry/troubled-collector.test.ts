import { once } from "node:events";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { describe, expect, it } from "vitest";
import { closedPort } from "../support/closed-port.js";
import { textReply } from "../support/scripted-llm-server.js";
import { useTestKit } from "../support/test-kit.js";
import { waitFor } from "../support/wait-for.js";
import { startRun, waitForRunEnd } from "../daemon/api-shapes.js";

const kit = useTestKit();

type Answer = (request: IncomingMessage, response: ServerResponse) => void;

/** A collector that answers every export with `answer`; counts the exports it received. */
async function troubledCollector(answer: Answer): Promise<{ url: string; received: () => number }> {
  let received = 0;
  const server = createServer((request, response) => {
    received += 1;
    request.resume();
    request.on("end", () => answer(request, response));
  });
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  kit.defer(async () => {
    server.closeAllConnections();
    server.close();
    await once(server, "close");
  });
  const { port } = server.address() as AddressInfo;
  return { url: `http://127.0.0.1:${port}`, received: () => received };
}

const HUGE = Buffer.alloc(16 * 1024 * 1024, 0x61);

const collectors: Array<[string, () => Promise<{ url: string; received: () => number }>]> = [
  ["never answers", () => troubledCollector(() => undefined)],
  [
    "answers a byte now and then, forever",
    () =>
      troubledCollector((_request, response) => {
        response.writeHead(200, { "content-type": "application/x-protobuf" });
        const timer = setInterval(() => response.write("a"), 200);
        response.on("close", () => clearInterval(timer));
      }),
  ],
  ["answers 500", () => troubledCollector((_request, response) => response.writeHead(500).end("no"))],
  ["answers 503", () => troubledCollector((_request, response) => response.writeHead(503).end("busy"))],
  ["answers 400", () => troubledCollector((_request, response) => response.writeHead(400).end("bad"))],
  [
    "answers 429 asking for an hour",
    () => troubledCollector((_request, response) => response.writeHead(429, { "retry-after": "3600" }).end()),
  ],
  ["answers a huge body", () => troubledCollector((_request, response) => response.writeHead(200).end(HUGE))],
  ["is down", async () => ({ url: `http://127.0.0.1:${await closedPort()}`, received: () => 1 })],
];

describe("a collector in trouble", () => {
  for (const [name, start] of collectors) {
    it(`leaves runs and the stop unaffected when it ${name}`, { timeout: 90_000 }, async () => {
      const collector = await start();
      const { project } = await kit.scriptedProject(() => textReply("done"), {
        config: { telemetry: { traces: { endpoint: collector.url } } },
      });
      project.writeAgent("worker", {});
      const daemon = await kit.daemon(project.configFile, {
        // Without the stop's own bound, one export would hold the stop for a minute.
        environment: { OTEL_BSP_SCHEDULE_DELAY: "20", OTEL_EXPORTER_OTLP_TIMEOUT: "60000" },
      });
      for (let round = 0; round < 3; round++) {
        const run = await startRun(daemon, "worker", "go");
        expect(await waitForRunEnd(daemon, run)).toMatchObject({ status: "completed" });
      }
      await waitFor(() => collector.received() > 0, "an export to reach the collector");
      // The operator is told rather than left to find traces missing (here where the exporter
      // gives up at once: the others retry, or wait, for the export's minute).
      if (["answers 500", "answers 400", "answers 429 asking for an hour"].includes(name))
        await waitFor(
          () => daemon.stderr().includes("traces not exported"),
          "the warning that traces were not exported",
        );
      expect((await daemon.request("GET", "/health")).status).toBe(200);
      const stopping = Date.now();
      daemon.signal("SIGTERM");
      const exit = await daemon.exited;
      expect(exit.code, daemon.stderr().slice(-2000)).toBe(0);
      // The stop's bound (5 s) and, for a busy collector (503), the exporter's last retry pause
      // (at most 5 s): far from the minute one export may take.
      expect(Date.now() - stopping).toBeLessThan(30_000);
      expect(daemon.stderr()).not.toContain("something still keeps its process running");
    });
  }
});
