// Poll throughput and latency of GET /agents/:id/events under many concurrent keep-alive clients,
// as a ratio to a bare fastify route that returns a body of the same size, measured in the same
// run. The load generator is a child process. On a shared machine throughput is noisy, so the bench
// also reports the server's CPU time per request, which other processes hardly disturb.
// Also an SSE replay: GET /agents/:id/events/stream?after=… read until its PAGE events came, against
// a bare fastify route that writes the same bytes as a stream.
// Target: throughput ratio >= 0.8. Usage: node scripts/bench/api-poll.bench.mjs [--quick] (after a build).
import { mkdtempSync, rmSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import path from "node:path";
import { fork } from "node:child_process";
import http from "node:http";
import { URL } from "node:url";
import Fastify from "fastify";
import { startApiServer } from "../../dist/api/api-server.js";
import { EventBus } from "../../dist/events/event-bus.js";
import { EventStore } from "../../dist/events/event-store.js";
import { createLogger } from "../../dist/logging/logger.js";

const QUICK = process.argv.includes("--quick") || process.env.AGENTD_BENCH_QUICK === "1";
const CLIENTS = QUICK ? 10 : 100;
const AGENTS = QUICK ? 10 : 100;
const EVENTS_PER_AGENT = 200;
const PAGE = 20;
const WARMUP_MILLISECONDS = QUICK ? 100 : 500;
const MEASURE_MILLISECONDS = QUICK ? 200 : 2_000;
// The machine is shared: interleave short rounds and compare medians, not one long lucky run.
const ROUNDS = QUICK ? 1 : 4;
/** Concurrent SSE replays (each a new connection). */
const STREAM_CLIENTS = QUICK ? 5 : 20;

const logger = createLogger({ level: "silent", pretty: false });
const dataDirectory = mkdtempSync(path.join(tmpdir(), "agentd-bench-poll-"));
const bus = new EventBus();
const store = await EventStore.open({ dataDirectory, bufferSize: EVENTS_PER_AGENT, bus, logger });
const agentIds = Array.from({ length: AGENTS }, (_, index) => `agent-${index}`);
for (let index = 0; index < EVENTS_PER_AGENT; index++) {
  for (const agent of agentIds) {
    bus.publish({
      agent,
      run: "r_bench",
      type: "thought",
      data: { text: `step ${index}: ${"x".repeat(120)}` },
    });
  }
}
const agents = new Map(agentIds.map((id) => [id, { id }]));
const services = {
  agents: { list: () => [...agents.values()], get: (id) => agents.get(id) },
  runs: { list: () => [], get: () => undefined, queueDepth: () => 0 },
  approvals: { list: () => [], decide: () => undefined },
  events: store,
  bus,
  health: { version: "bench", startedAt: new Date() },
};
const after = EVENTS_PER_AGENT - PAGE;
const api = await startApiServer(services, { host: "127.0.0.1", port: 0, logger });
const token = "bench-token-0123456789";
const apiWithToken = await startApiServer(services, { host: "127.0.0.1", port: 0, token, logger });

// The bare route answers the same bytes the poll route answers, prebuilt.
const sample = await new Promise((resolve, reject) => {
  http
    .get(`${api.url}/agents/agent-0/events?after=${after}&limit=${PAGE}`, (response) => {
      let body = "";
      response.setEncoding("utf8");
      response.on("data", (chunk) => (body += chunk));
      response.on("end", () => resolve(body));
    })
    .on("error", reject);
});
// The SSE replay's bytes as the stream route writes them, up to its PAGE-th event.
const streamSample = await new Promise((resolve, reject) => {
  const request = http.get(`${api.url}/agents/agent-0/events/stream?after=${after}`, (response) => {
    let body = "";
    response.setEncoding("utf8");
    response.on("data", (chunk) => {
      body += chunk;
      if (body.split("\nid: ").length - 1 < PAGE || !body.endsWith("\n\n")) return;
      request.destroy();
      resolve(body);
    });
  });
  request.on("error", reject);
});
const bare = Fastify();
bare.get("/agents/:id/events", async (_request, reply) =>
  reply.type("application/json; charset=utf-8").send(sample),
);
bare.get("/agents/:id/events/stream", (_request, reply) => {
  reply.hijack();
  reply.raw.writeHead(200, {
    "content-type": "text/event-stream; charset=utf-8",
    "cache-control": "no-cache",
    connection: "keep-alive",
  });
  reply.raw.write(streamSample);
});
await bare.listen({ host: "127.0.0.1", port: 0 });
const bareUrl = `http://127.0.0.1:${bare.server.address().port}`;

function load(paths, headers = {}, streamEvents = undefined) {
  return new Promise((resolve, reject) => {
    const child = fork(new URL("./api-load-worker.mjs", import.meta.url));
    let cpuAtStart;
    let cpuMicroseconds = 0;
    child.on("message", (message) => {
      if (message.phase === "measuring") cpuAtStart = process.cpuUsage();
      else if (message.phase === "measured") {
        const used = process.cpuUsage(cpuAtStart);
        cpuMicroseconds = used.user + used.system;
      } else if (message.phase === "done") {
        const requests = (message.perSecond * MEASURE_MILLISECONDS) / 1_000;
        resolve({ ...message, cpuPerRequest: cpuMicroseconds / Math.max(1, requests) });
      }
    });
    child.once("error", reject);
    child.send({
      paths,
      headers,
      streamEvents,
      clients: streamEvents === undefined ? CLIENTS : STREAM_CLIENTS,
      warmupMilliseconds: WARMUP_MILLISECONDS,
      measureMilliseconds: MEASURE_MILLISECONDS,
    });
  });
}

const pollPaths = (base) => agentIds.map((id) => `${base}/agents/${id}/events?after=${after}&limit=${PAGE}`);
const streamPaths = (base) => agentIds.map((id) => `${base}/agents/${id}/events/stream?after=${after}`);
const results = { bare: [], api: [], apiWithToken: [], streamBare: [], stream: [] };
const bearer = { authorization: `Bearer ${token}` };
for (let round = 0; round < ROUNDS; round++) {
  results.bare.push(await load(agentIds.map((id) => `${bareUrl}/agents/${id}/events`)));
  results.api.push(await load(pollPaths(api.url)));
  results.apiWithToken.push(await load(pollPaths(apiWithToken.url), bearer));
  results.streamBare.push(await load(streamPaths(bareUrl), {}, PAGE));
  results.stream.push(await load(streamPaths(apiWithToken.url), bearer, PAGE));
}

const median = (values) => [...values].sort((left, right) => left - right)[Math.floor(values.length / 2)];
const summary = (runs) => ({
  perSecond: median(runs.map((run) => run.perSecond)),
  p50: median(runs.map((run) => run.p50)),
  p99: median(runs.map((run) => run.p99)),
  cpuPerRequest: median(runs.map((run) => run.cpuPerRequest)),
  errors: runs.reduce((total, run) => total + run.errors, 0),
});
const ratios = (runs) => runs.map((run, round) => run.perSecond / results.bare[round].perSecond);
const format = (name, result) =>
  `${name.padEnd(28)} ${result.perSecond.toFixed(0).padStart(7)} req/s   p50 ${result.p50.toFixed(2)} ms   p99 ${result.p99.toFixed(2)} ms   server CPU ${result.cpuPerRequest.toFixed(0)} µs/req   errors ${result.errors}`;
const bareSummary = summary(results.bare);
const apiSummary = summary(results.api);
const tokenSummary = summary(results.apiWithToken);
const streamBareSummary = summary(results.streamBare);
const streamSummary = summary(results.stream);
/** Per round, a side's server CPU per request over the bare route's: median (min–max). */
const cpuRatios = (runs, bareRuns) => {
  const each = runs
    .map((run, round) => run.cpuPerRequest / bareRuns[round].cpuPerRequest)
    .sort((a, b) => a - b);
  return `${median(each).toFixed(2)}x (${each[0].toFixed(2)}–${each.at(-1).toFixed(2)})`;
};
console.log(
  `${CLIENTS} keep-alive clients, ${AGENTS} agents, ${PAGE} events per response (${sample.length} bytes)`,
);
console.log(`medians of ${ROUNDS} interleaved rounds of ${MEASURE_MILLISECONDS / 1_000} s`);
console.log(format("bare fastify, same body", bareSummary));
console.log(format("GET /agents/:id/events", apiSummary));
console.log(format("  ... with bearer token", tokenSummary));
console.log(format(`bare SSE, same ${PAGE} events`, streamBareSummary));
console.log(format("SSE replay, bearer token", streamSummary));
console.log(`throughput ratio ${median(ratios(results.api)).toFixed(2)} (median per round; target >= 0.8)`);
console.log(`throughput ratio with token ${median(ratios(results.apiWithToken)).toFixed(2)}`);
console.log(
  `efficiency ratio ${(bareSummary.cpuPerRequest / apiSummary.cpuPerRequest).toFixed(2)} (bare CPU per request / api CPU per request)`,
);
console.log(
  `p99 latency ratio ${(apiSummary.p99 / bareSummary.p99).toFixed(2)} (api / bare; lower is better)`,
);
console.log(
  `server CPU per poll / bare: ${cpuRatios(results.api, results.bare)} (median of rounds, min–max)`,
);
console.log(`  ... with bearer token: ${cpuRatios(results.apiWithToken, results.bare)}`);
console.log(`server CPU per SSE replay / bare: ${cpuRatios(results.stream, results.streamBare)}`);
console.log(
  `throughput ratio SSE replay ${median(results.stream.map((run, round) => run.perSecond / results.streamBare[round].perSecond)).toFixed(2)}`,
);
console.log(
  `load average ${loadavg()
    .map((load) => load.toFixed(2))
    .join(" ")}`,
);

await api.close();
await apiWithToken.close();
await bare.close();
store.close();
rmSync(dataDirectory, { recursive: true, force: true });
