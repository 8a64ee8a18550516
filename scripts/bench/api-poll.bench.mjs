// Poll throughput and latency of GET /agents/:id/events under many concurrent keep-alive clients,
// as a ratio to a bare fastify route that returns a body of the same size to the same request (path,
// query string and headers), measured in the same run. agentd's API, the bare server and the load generator are three processes; the CPU time per
// request is each server's own (process.cpuUsage in its process over the measured window), which
// other processes hardly disturb. Rounds are interleaved, the order swapped every other round.
// Also an SSE replay: GET /agents/:id/events/stream?after=… read until its PAGE events came, against
// a bare fastify route that writes the same bytes as a stream.
// Targets: throughput ratio >= 0.9, CPU per poll and per SSE replay <= 1.3x the bare route's.
// Usage: node scripts/bench/api-poll.bench.mjs [--quick] [--only=poll|stream] [--cpu-prof-dir=<dir>]
// (after a build); with --cpu-prof-dir the API's process writes a CPU profile there, and with
// --only=stream (or poll) only those phases run, so that the profile holds them alone. The same file runs as the API
// server (`--role=api`) and the bare server (`--role=bare`).
import { fork } from "node:child_process";
import { once } from "node:events";
import { mkdtempSync, rmSync } from "node:fs";
import http from "node:http";
import { loadavg, tmpdir } from "node:os";
import path from "node:path";
import { URL, fileURLToPath } from "node:url";
import Fastify from "fastify";

const QUICK = process.argv.includes("--quick") || process.env.AGENTD_BENCH_QUICK === "1";
const CLIENTS = QUICK ? 10 : 100;
const AGENTS = QUICK ? 10 : 100;
const EVENTS_PER_AGENT = 200;
const PAGE = 20;
const WARMUP_MILLISECONDS = QUICK ? 100 : 500;
const MEASURE_MILLISECONDS = QUICK ? 200 : 1_500;
// The machine is shared: interleave short rounds and compare per-round ratios, not one long lucky run.
const ROUNDS = QUICK ? 1 : 8;
/** Concurrent SSE replays (each a new connection). */
const STREAM_CLIENTS = QUICK ? 5 : 20;
const TOKEN = "bench-token-0123456789";
const PROFILE_DIRECTORY = process.argv
  .find((argument) => argument.startsWith("--cpu-prof-dir="))
  ?.slice("--cpu-prof-dir=".length);
/** `--only=poll` or `--only=stream`: those phases alone (to profile them, or compare builds quickly). */
const ONLY = process.argv.find((argument) => argument.startsWith("--only="))?.slice("--only=".length);
const role = process.argv.find((argument) => argument.startsWith("--role="))?.slice("--role=".length);
const agentIds = Array.from({ length: AGENTS }, (_, index) => `agent-${index}`);
const after = EVENTS_PER_AGENT - PAGE;

if (role === "api") await serveApi();
else if (role === "bare") await serveBare();
else await main();

/** Role `api`: agentd's API server on an event store of AGENTS agents, without and with a token. */
async function serveApi() {
  const { startApiServer } = await import("../../dist/api/api-server.js");
  const { EventBus } = await import("../../dist/events/event-bus.js");
  const { EventStore } = await import("../../dist/events/event-store.js");
  const { createLogger } = await import("../../dist/logging/logger.js");
  const { stopPretenuring } = await import("../../dist/cli/stop-pretenuring.js");
  const logger = createLogger({ level: "silent", pretty: false });
  const dataDirectory = mkdtempSync(path.join(tmpdir(), "agentd-bench-poll-"));
  const bus = new EventBus();
  const store = await EventStore.open({ dataDirectory, bufferSize: EVENTS_PER_AGENT, bus, logger });
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
  const api = await startApiServer(services, { host: "127.0.0.1", port: 0, logger });
  const apiWithToken = await startApiServer(services, { host: "127.0.0.1", port: 0, token: TOKEN, logger });
  // As `agentd start` does once it is up (src/cli/stop-pretenuring.ts).
  stopPretenuring();
  await serveCpu({ url: api.url, urlWithToken: apiWithToken.url }, async () => {
    await api.close();
    await apiWithToken.close();
    store.close();
    rmSync(dataDirectory, { recursive: true, force: true });
  });
}

/** Role `bare`: fastify with two routes answering the bytes agentd's answered, prebuilt. */
async function serveBare() {
  const [{ sample, streamSample }] = await once(process, "message");
  // The V8 settings agentd's API runs with: the floor differs from it by its code alone.
  const { stopPretenuring } = await import("../../dist/cli/stop-pretenuring.js");
  stopPretenuring();
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
      "x-accel-buffering": "no",
    });
    reply.raw.write(streamSample);
  });
  await bare.listen({ host: "127.0.0.1", port: 0 });
  await serveCpu({ url: `http://127.0.0.1:${bare.server.address().port}` }, () => bare.close());
}

/** A server role's side of the IPC: sends `ready`, answers `cpu` with its CPU time, stops on `stop`. */
async function serveCpu(ready, stop) {
  process.on("message", async (message) => {
    if (message === "cpu") {
      const { user, system } = process.cpuUsage();
      process.send({ cpuMicroseconds: user + system });
    } else if (message === "stop") {
      await stop();
      process.exit(0);
    }
  });
  process.send(ready);
}

/** A server role's node flags: with --cpu-prof-dir, a CPU profile named after the role. */
function profiled(name) {
  if (PROFILE_DIRECTORY === undefined) return [];
  return ["--cpu-prof", `--cpu-prof-dir=${PROFILE_DIRECTORY}`, `--cpu-prof-name=${name}.cpuprofile`];
}

/** A child's answer to `cpu`. */
async function cpuOf(child) {
  child.send("cpu");
  const [{ cpuMicroseconds }] = await once(child, "message");
  return cpuMicroseconds;
}

function get(url) {
  return new Promise((resolve, reject) => {
    http
      .get(url, (response) => {
        let body = "";
        response.setEncoding("utf8");
        response.on("data", (chunk) => (body += chunk));
        response.on("end", () => resolve(body));
      })
      .on("error", reject);
  });
}

async function main() {
  const script = fileURLToPath(import.meta.url);
  const apiProcess = fork(script, ["--role=api"], { execArgv: profiled("api") });
  const [urls] = await once(apiProcess, "message");
  // The bare routes answer the same bytes the poll and the stream routes answer.
  const sample = await get(`${urls.url}/agents/agent-0/events?after=${after}&limit=${PAGE}`);
  const streamSample = await new Promise((resolve, reject) => {
    const request = http.get(`${urls.url}/agents/agent-0/events/stream?after=${after}`, (response) => {
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
  const bareProcess = fork(script, ["--role=bare"], { execArgv: profiled("bare") });
  bareProcess.send({ sample, streamSample });
  const [{ url: bareUrl }] = await once(bareProcess, "message");
  const loadBefore = loadavg()[0];

  /** One load window against `server` (the child whose CPU counts). */
  function load(server, paths, headers = {}, streamEvents = undefined) {
    return new Promise((resolve, reject) => {
      const child = fork(new URL("./api-load-worker.mjs", import.meta.url));
      let cpuAtStart;
      let cpuUsed;
      child.on("message", (message) => {
        if (message.phase === "measuring") cpuAtStart = cpuOf(server);
        else if (message.phase === "measured")
          cpuUsed = Promise.all([cpuAtStart, cpuOf(server)]).then(([start, end]) => end - start);
        else if (message.phase === "done") {
          const requests = (message.perSecond * MEASURE_MILLISECONDS) / 1_000;
          cpuUsed.then(
            (used) => resolve({ ...message, cpuPerRequest: used / Math.max(1, requests) }),
            reject,
          );
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

  const pollPaths = (base) =>
    agentIds.map((id) => `${base}/agents/${id}/events?after=${after}&limit=${PAGE}`);
  const streamPaths = (base) => agentIds.map((id) => `${base}/agents/${id}/events/stream?after=${after}`);
  const results = { bare: [], api: [], apiWithToken: [], streamBare: [], stream: [] };
  const bearer = { authorization: `Bearer ${TOKEN}` };
  // Each floor gets the very request its side gets (the same path and query string, the same
  // headers): what node and fastify do with a request's bytes is paid alike, and only what the
  // daemon's route does with them counts against it.
  const measures = {
    bare: () => load(bareProcess, pollPaths(bareUrl)),
    api: () => load(apiProcess, pollPaths(urls.url)),
    apiWithToken: () => load(apiProcess, pollPaths(urls.urlWithToken), bearer),
    streamBare: () => load(bareProcess, streamPaths(bareUrl), bearer, PAGE),
    stream: () => load(apiProcess, streamPaths(urls.urlWithToken), bearer, PAGE),
  };
  for (let round = 0; round < ROUNDS; round++) {
    // Each floor next to what is compared with it, the order swapped every other round.
    const order =
      round % 2 === 0
        ? ["bare", "api", "apiWithToken", "streamBare", "stream"]
        : ["apiWithToken", "api", "bare", "stream", "streamBare"];
    for (const name of order) {
      if (ONLY === undefined || (ONLY === "stream") === name.startsWith("stream")) {
        results[name].push(await measures[name]());
      }
    }
  }
  apiProcess.send("stop");
  bareProcess.send("stop");
  await Promise.all([once(apiProcess, "exit"), once(bareProcess, "exit")]);
  report(results, sample, loadBefore);
}

function report(results, sample, loadBefore) {
  const median = (values) => [...values].sort((left, right) => left - right)[Math.floor(values.length / 2)];
  const summary = (runs) => ({
    perSecond: median(runs.map((run) => run.perSecond)),
    p50: median(runs.map((run) => run.p50)),
    p99: median(runs.map((run) => run.p99)),
    cpuPerRequest: median(runs.map((run) => run.cpuPerRequest)),
    errors: runs.reduce((total, run) => total + run.errors, 0),
  });
  const format = (name, result) =>
    `${name.padEnd(28)} ${result.perSecond.toFixed(0).padStart(7)} req/s   p50 ${result.p50.toFixed(2)} ms   p99 ${result.p99.toFixed(2)} ms   server CPU ${result.cpuPerRequest.toFixed(0)} µs/req   errors ${result.errors}`;
  /** Per round, a side's figure over the bare route's: median (quartiles, range). */
  const perRound = (runs, bareRuns, figure) => {
    const each = runs.map((run, round) => figure(run) / figure(bareRuns[round])).sort((a, b) => a - b);
    const at = (quantile) => each[Math.min(each.length - 1, Math.floor(quantile * each.length))];
    return `${at(0.5).toFixed(2)}x (quartiles ${at(0.25).toFixed(2)}–${at(0.75).toFixed(2)}, range ${each[0].toFixed(2)}–${each.at(-1).toFixed(2)}, ${each.length} rounds)`;
  };
  const cpu = (run) => run.cpuPerRequest;
  const throughput = (run) => run.perSecond;
  console.log(
    `${CLIENTS} keep-alive clients, ${AGENTS} agents, ${PAGE} events per response (${sample.length} bytes); ${STREAM_CLIENTS} concurrent SSE replays`,
  );
  console.log(
    `medians of ${ROUNDS} interleaved rounds of ${MEASURE_MILLISECONDS / 1_000} s; agentd's API, the bare server and the load generator in three processes`,
  );
  // With --only, the phases that ran; otherwise all, in this order.
  const polled = results.bare.length > 0;
  const streamed = results.stream.length > 0;
  const bareSummary = polled ? summary(results.bare) : undefined;
  const apiSummary = polled ? summary(results.api) : undefined;
  if (polled) {
    console.log(format("bare fastify, same body", bareSummary));
    console.log(format("GET /agents/:id/events", apiSummary));
    console.log(format("  ... with bearer token", summary(results.apiWithToken)));
  }
  if (streamed) {
    console.log(format(`bare SSE, same ${PAGE} events`, summary(results.streamBare)));
    console.log(format("SSE replay, bearer token", summary(results.stream)));
  }
  if (polled) {
    console.log(`throughput ratio ${perRound(results.api, results.bare, throughput)} (target >= 0.9)`);
    console.log(`throughput ratio with token ${perRound(results.apiWithToken, results.bare, throughput)}`);
  }
  if (streamed) {
    console.log(`throughput ratio SSE replay ${perRound(results.stream, results.streamBare, throughput)}`);
  }
  if (polled) {
    console.log(
      `p99 latency ratio ${(apiSummary.p99 / bareSummary.p99).toFixed(2)} (api / bare; lower is better)`,
    );
    console.log(`CPU ratio per poll ${perRound(results.api, results.bare, cpu)} (target <= 1.3)`);
    console.log(`CPU ratio per poll with token ${perRound(results.apiWithToken, results.bare, cpu)}`);
  }
  if (streamed) {
    console.log(
      `CPU ratio per SSE replay ${perRound(results.stream, results.streamBare, cpu)} (target <= 1.3)`,
    );
  }
  console.log(
    `load average ${loadBefore.toFixed(2)} → ${loadavg()[0].toFixed(2)} (1 min; now ${loadavg()
      .map((load) => load.toFixed(2))
      .join(" ")})`,
  );
}
