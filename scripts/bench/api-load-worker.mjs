// Load generator for api-poll.bench.mjs, run as a child process: `clients` concurrent keep-alive
// loops over `paths`, counting responses and their latencies during the measured window. With
// `streamEvents`, each path is a Server-Sent Events stream, read until that many `id:` lines came
// (a replay), then closed. It tells
// the parent when the window opens and closes, so the parent can measure its own CPU time.
import http from "node:http";
import { performance } from "node:perf_hooks";
import { setTimeout as delay } from "node:timers/promises";
const { paths, headers, clients, warmupMilliseconds, measureMilliseconds, streamEvents } = await new Promise(
  (resolve) => process.once("message", resolve),
);
const agent = new http.Agent({ keepAlive: true, maxSockets: clients });
const latencies = [];
let errors = 0;
let measuring = false;
let running = true;

function get(url) {
  return new Promise((resolve) => {
    const request = http.get(url, { agent, headers }, (response) => {
      if (streamEvents === undefined) {
        response.on("data", () => undefined);
        response.on("end", () => resolve(response.statusCode === 200));
        return;
      }
      let seen = 0;
      response.setEncoding("utf8");
      response.on("data", (text) => {
        seen += text.split("\nid: ").length - 1 + (text.startsWith("id: ") ? 1 : 0);
        if (seen < streamEvents) return;
        resolve(response.statusCode === 200);
        request.destroy();
      });
      response.on("end", () => resolve(false));
    });
    request.on("error", () => resolve(false));
  });
}

async function client(offset) {
  for (let index = offset; running; index++) {
    const started = performance.now();
    const ok = await get(paths[index % paths.length]);
    if (!measuring) continue;
    if (ok) latencies.push(performance.now() - started);
    else errors++;
  }
}

const loops = Array.from({ length: clients }, (_, index) => client(index));
await delay(warmupMilliseconds);
process.send({ phase: "measuring" });
measuring = true;
const started = performance.now();
await delay(measureMilliseconds);
measuring = false;
process.send({ phase: "measured" });
const seconds = (performance.now() - started) / 1_000;
running = false;
await Promise.all(loops);
agent.destroy();
latencies.sort((left, right) => left - right);
const at = (quantile) =>
  latencies[Math.min(latencies.length - 1, Math.floor(quantile * latencies.length))] ?? 0;
process.send({ phase: "done", perSecond: latencies.length / seconds, p50: at(0.5), p99: at(0.99), errors });
process.disconnect();
