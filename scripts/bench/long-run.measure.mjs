// Long-run measurement (not a timed test, not part of `npm run bench`): what a run of many rounds
// costs the store and its readers. One agent calls the builtin `read_file` TOTAL times (context
// compaction on, as a run that long needs), through the real composition root in this process
// (records, events and checkpoints on disk); the model is a scripted server in a child process
// (this file, `--role=model`). The model holds its answer at round ROUNDS: the daemon is shut down
// there with the run in flight, started again on the same data_dir, and the run resumed from its
// checkpoint; it then runs to its end (TOTAL rounds, ~2 events each). Printed, with the load:
//   - the run's checkpoint file size at each sampled round, and at the shutdown;
//   - the restart's time and the resume's time to the next model call (wall and this process' CPU);
//   - the run log's size and event count, then the readers over it: every page of
//     GET /runs/:run/events (limit 1,000; the first, middle and last page's time), the ring buffer
//     poll (GET /agents/:id/events?after=0: `missed`), and the SSE replay of the whole backlog
//     (GET /agents/:id/events/stream?after=0 until the last id arrives).
// Usage: npm run build && node --expose-gc scripts/bench/long-run.measure.mjs [--rounds=10000]
//        [--total=50000] [--no-compaction]
import { Buffer } from "node:buffer";
import { fork } from "node:child_process";
import { once } from "node:events";
import { mkdirSync, rmSync, statSync, writeFileSync } from "node:fs";
import { cpus, loadavg } from "node:os";
import path from "node:path";
import { URL, fileURLToPath } from "node:url";
import { performance } from "node:perf_hooks";
import { TextDecoder } from "node:util";
import { fetch } from "undici";
import { createServer } from "node:http";
import { createBenchProject, startBenchDaemon } from "./bench-daemon.mjs";

const option = (name, fallback) =>
  Number(
    process.argv.find((argument) => argument.startsWith(`--${name}=`))?.slice(name.length + 3) ?? fallback,
  );
const ROUNDS = option("rounds", 10_000);
const TOTAL = option("total", 50_000);
/** `--no-compaction`: the whole conversation kept (every request carries it: keep the rounds few). */
const COMPACTION = !process.argv.includes("--no-compaction");
const SAMPLE_EVERY = Math.max(1, Math.floor(ROUNDS / 5));
const AGENT = "long";

const load = () =>
  `load ${loadavg()
    .map((value) => value.toFixed(2))
    .join(" ")} on ${cpus().length} cores`;
const megabytes = (bytes) => `${(bytes / 1_048_576).toFixed(2)} MB`;
const cpuMilliseconds = () => {
  const usage = process.cpuUsage();
  return (usage.user + usage.system) / 1_000;
};

/** With a file name: starts this process' CPU profiler; the function returned writes the profile there. */
async function profileIf(file) {
  if (!file) return undefined;
  const { Session } = await import("node:inspector/promises");
  const session = new Session();
  session.connect();
  await session.post("Profiler.enable");
  await session.post("Profiler.setSamplingInterval", { interval: 100 });
  await session.post("Profiler.start");
  return async () => {
    const { profile } = await session.post("Profiler.stop");
    writeFileSync(file, JSON.stringify(profile));
    session.disconnect();
  };
}

async function main() {
  const model = fork(
    fileURLToPath(import.meta.url),
    ["--role=model", `--rounds=${ROUNDS}`, `--total=${TOTAL}`],
    {
      execArgv: [],
    },
  );
  const [{ url: modelUrl }] = await once(model, "message");
  /** The model's next message that satisfies `test`. */
  const fromModel = (test) =>
    new Promise((resolve) => {
      const listener = (message) => {
        if (!test(message)) return;
        model.off("message", listener);
        resolve(message);
      };
      model.on("message", listener);
    });

  const root = createBenchProject("agentd-long-run-", {});
  const workdir = path.join(root, "work");
  mkdirSync(workdir);
  writeFileSync(path.join(workdir, "note.txt"), "the nightly build passed.\n");
  writeFileSync(
    path.join(root, "agents", `${AGENT}.md`),
    [
      "---",
      "description: a very long run",
      "tools: [read_file]",
      `workdir: ${JSON.stringify(workdir)}`,
      "permissions:",
      "  allow: [read_file]",
      "limits:",
      "  max_iterations: 10000000",
      "  max_cost_usd: 1000000",
      "  max_tokens: 1000000000",
      "  timeout: 24h",
      "---",
      "You read a note, again and again.",
      "",
    ].join("\n"),
  );
  const settings = {
    llm: {
      base_url: modelUrl,
      api_key: "bench",
      model: "bench",
      context: COMPACTION ? { max_tokens: 3_000, keep_recent: 6 } : { max_tokens: 1_000_000_000 },
    },
    shutdown: { grace: "0s" },
  };
  const dataDirectory = path.join(root, "data");
  const checkpointFile = (run) => path.join(dataDirectory, "checkpoints", `${run}.json`);
  const sizeOf = (file) => statSync(file, { throwIfNoEntry: false })?.size ?? 0;

  try {
    console.log(
      `long run: ${ROUNDS} rounds of read_file, ${COMPACTION ? "compaction on (max_tokens 3000, keep_recent 6)" : "no compaction (the whole conversation kept)"}; ${load()}`,
    );
    let daemon = await startBenchDaemon({ root, modelPort: Number(new URL(modelUrl).port), settings });
    const started = performance.now();
    const held = fromModel((message) => message.held !== undefined);
    let run;
    let peak = 0;
    model.on("message", (message) => {
      if (message.sample === undefined || run === undefined) return;
      const size = sizeOf(checkpointFile(run));
      peak = Math.max(peak, size);
      console.log(
        `  round ${message.sample}: checkpoint ${megabytes(size)}, events ${daemon.events.lastId(AGENT)}, ${((performance.now() - started) / 1_000).toFixed(0)} s; ${load()}`,
      );
    });
    const record = await daemon.runs.start(AGENT, `Call read_file ${TOTAL} times.`);
    run = record.id;
    await held;
    const eventsAtStop = daemon.events.lastId(AGENT);
    await daemon.shutdown();
    console.log(
      `  shut down at round ${ROUNDS}: checkpoint ${megabytes(sizeOf(checkpointFile(run)))}, run log ${megabytes(sizeOf(path.join(dataDirectory, "runs", `${run}.events.jsonl`)))}, agent log ${megabytes(sizeOf(path.join(dataDirectory, "events", `${AGENT}.jsonl`)))}, ${eventsAtStop} events`,
    );

    globalThis.gc?.();
    let wall = performance.now();
    let cpu = cpuMilliseconds();
    daemon = await startBenchDaemon({ root, modelPort: Number(new URL(modelUrl).port), settings });
    console.log(
      `  restart: ${(performance.now() - wall).toFixed(0)} ms wall, ${(cpuMilliseconds() - cpu).toFixed(0)} ms CPU; ${load()}`,
    );
    const asked = fromModel((message) => message.round !== undefined);
    wall = performance.now();
    cpu = cpuMilliseconds();
    const profiler = await profileIf(process.env.AGENTD_PROFILE_RESUME);
    await daemon.runs.resume(run);
    const { round: resumedAt } = await asked;
    await profiler?.();
    console.log(
      `  resume to the next model call (round ${resumedAt}): ${(performance.now() - wall).toFixed(0)} ms wall, ${(cpuMilliseconds() - cpu).toFixed(0)} ms CPU; ${load()}`,
    );
    await daemon.runs.waitUntilIdle(3_600_000);
    const ended = daemon.runs.get(run);
    console.log(
      `  run ended ${ended?.status} (${ended?.reason ?? ""} ${ended?.error?.message ?? ended?.error ?? ""}) after ${((performance.now() - started) / 1_000).toFixed(0)} s; checkpoint largest seen ${megabytes(peak)}`,
    );
    const lastId = daemon.events.lastId(AGENT);
    const headers = daemon.token ? { authorization: `Bearer ${daemon.token}` } : {};
    const get = async (route) => {
      const response = await fetch(`${daemon.url}${route}`, { headers });
      return response.json();
    };

    // Every page of the run's log.
    const runEvents = [];
    const pageTimes = [];
    wall = performance.now();
    cpu = cpuMilliseconds();
    for (let after = 0; ;) {
      const pageStarted = performance.now();
      const page = await get(`/runs/${run}/events?after=${after}&limit=1000`);
      pageTimes.push(performance.now() - pageStarted);
      runEvents.push(...page.events);
      if (page.events.length < 1000) break;
      after = page.next;
    }
    const middle = pageTimes[Math.floor(pageTimes.length / 2)] ?? 0;
    console.log(
      `  GET /runs/:run/events, ${pageTimes.length} pages of 1,000: ${runEvents.length} events in ${(performance.now() - wall).toFixed(0)} ms wall, ${(cpuMilliseconds() - cpu).toFixed(0)} ms CPU (client and daemon); page 1 ${pageTimes[0]?.toFixed(1)} ms, middle ${middle.toFixed(1)} ms, last ${pageTimes.at(-1)?.toFixed(1)} ms; ${load()}`,
    );

    const poll = await get(`/agents/${AGENT}/events?after=0&limit=1000`);
    console.log(
      `  GET /agents/:id/events?after=0: ${poll.events.length} events from memory, oldest ${poll.oldest}, missed ${poll.missed} (the rest is in the run log)`,
    );

    // The SSE replay of everything from the start.
    wall = performance.now();
    cpu = cpuMilliseconds();
    const controller = new AbortController();
    const response = await fetch(`${daemon.url}/agents/${AGENT}/events/stream?after=0`, {
      headers,
      signal: controller.signal,
    });
    const decoder = new TextDecoder();
    let buffered = "";
    let received = 0;
    let lastSeen = 0;
    let firstAt;
    for await (const chunk of response.body) {
      firstAt ??= performance.now() - wall;
      buffered += decoder.decode(chunk, { stream: true });
      let end;
      while ((end = buffered.indexOf("\n\n")) >= 0) {
        const message = buffered.slice(0, end);
        buffered = buffered.slice(end + 2);
        const id = /^id: (\d+)$/m.exec(message)?.[1];
        if (id !== undefined) {
          received += 1;
          lastSeen = Number(id);
        }
      }
      if (lastSeen >= lastId) break;
    }
    controller.abort();
    console.log(
      `  SSE replay from 0: ${received} events up to id ${lastSeen} (of ${lastId}) in ${(performance.now() - wall).toFixed(0)} ms wall, ${(cpuMilliseconds() - cpu).toFixed(0)} ms CPU (client and daemon), first event after ${firstAt?.toFixed(0)} ms; ${load()}`,
    );
    const heap = process.memoryUsage();
    console.log(`  heap used ${megabytes(heap.heapUsed)}, rss ${megabytes(heap.rss)} at the end`);
    await daemon.shutdown();
  } finally {
    model.kill();
    rmSync(root, { recursive: true, force: true });
  }
}

/**
 * Role `model`: a streaming OpenAI-compatible server. Each answer calls read_file (its id
 * `call_<k>_of_<n>`, so it keeps no state) until the n-th result, then a final text; a request
 * without tools is a compaction and gets a summary. At round ROUNDS it answers nothing the first
 * time (the daemon is shut down meanwhile) and tells the parent `{ held }`; every SAMPLE_EVERY
 * rounds `{ sample }`; after the hold, the first request `{ round }`.
 */
async function serveModel() {
  let holding = false;
  let afterHold = false;
  const http = createServer(async (request, response) => {
    const parts = [];
    for await (const part of request) parts.push(part);
    const body = JSON.parse(Buffer.concat(parts).toString("utf8"));
    const base = { id: "measure", object: "chat.completion.chunk", created: 0, model: body.model };
    const send = (choices, extra = {}) =>
      response.write(`data: ${JSON.stringify({ ...base, choices, ...extra })}\n\n`);
    const last = body.messages.at(-1);
    const previous = /^call_(\d+)_of_(\d+)$/.exec(last.role === "tool" ? last.tool_call_id : "");
    const task = /Call (\w+) (\d+) times/.exec(
      body.messages.find((message) => message.role === "user")?.content ?? "",
    );
    const total = previous ? Number(previous[2]) : Number(task?.[2] ?? 0);
    const round = previous ? Number(previous[1]) + 1 : 1;
    if (body.tools && round === ROUNDS && !holding) {
      holding = true;
      afterHold = true;
      process.send({ held: round });
      return;
    }
    if (afterHold && holding && body.tools) {
      afterHold = false;
      process.send({ round });
    }
    if (body.tools && round % SAMPLE_EVERY === 0) process.send({ sample: round });
    response.writeHead(200, { "content-type": "text/event-stream" });
    if (!body.tools) {
      send([
        {
          index: 0,
          delta: { role: "assistant", content: "Summary: the note, read many times." },
          finish_reason: null,
        },
      ]);
      send([{ index: 0, delta: {}, finish_reason: "stop" }]);
    } else if (round <= total) {
      const id = `call_${round}_of_${total}`;
      const argumentsText = JSON.stringify({ path: "note.txt", offset: (round % 20) + 1 });
      send([
        {
          index: 0,
          delta: {
            role: "assistant",
            content: null,
            tool_calls: [
              { index: 0, id, type: "function", function: { name: "read_file", arguments: argumentsText } },
            ],
          },
          finish_reason: null,
        },
      ]);
      send([{ index: 0, delta: {}, finish_reason: "tool_calls" }]);
    } else {
      send([{ index: 0, delta: { role: "assistant", content: "All rounds done." }, finish_reason: null }]);
      send([{ index: 0, delta: {}, finish_reason: "stop" }]);
    }
    if (body.stream_options?.include_usage)
      send([], { usage: { prompt_tokens: 100, completion_tokens: 10, total_tokens: 110 } });
    response.end("data: [DONE]\n\n");
  });
  http.listen(0, "127.0.0.1");
  await once(http, "listening");
  process.on("disconnect", () => process.exit(0));
  process.send({ url: `http://127.0.0.1:${http.address().port}/v1` });
}

if (process.argv.includes("--role=model")) {
  await serveModel();
} else {
  await main();
}
