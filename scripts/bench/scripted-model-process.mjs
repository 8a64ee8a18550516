// The loop benches' peers in a process of their own: a scripted OpenAI-compatible streaming model
// (a `noop` tool call per round while the conversation holds fewer tool results than its task's
// "Call noop <N> times.", then a final text: no state, so nothing to plan between runs) and an OTLP/HTTP sink that takes every
// export. In its own process so the bench's CPU time (process.cpuUsage) counts the loop only: a
// server in the measured process parses every request body, so a larger prompt (memory) or an
// export (traces) would also be charged for the peer's work. Not a bench itself (run-all runs
// *.bench.mjs only). Import startScriptedModel(); the file run as a child serves.
import { Buffer } from "node:buffer";
import { fork } from "node:child_process";
import { once } from "node:events";
import { createServer } from "node:http";
import process from "node:process";
import { fileURLToPath } from "node:url";

/**
 * Starts the peers in a child process. Resolves with the model's base URL, the sink's URL,
 * `stats()` (the sink's request and byte counts, and the child's CPU time in ms, user + system) and
 * `close()`.
 */
export async function startScriptedModel() {
  const child = fork(fileURLToPath(import.meta.url), ["--serve"], {
    // Not the bench's flags (--cpu-prof would profile the peer into the bench's profile).
    execArgv: [],
    stdio: ["ignore", "inherit", "inherit", "ipc"],
  });
  const pending = [];
  child.on("message", (message) => pending.shift()?.(message));
  const ask = (message) =>
    new Promise((resolve) => {
      pending.push(resolve);
      child.send(message);
    });
  const [ready] = await once(child, "message");
  return {
    modelUrl: ready.modelUrl,
    sinkUrl: ready.sinkUrl,
    stats: () => ask({ stats: true }),
    close: async () => {
      child.disconnect();
      if (child.exitCode === null) await once(child, "exit");
    },
  };
}

if (process.argv.includes("--serve") && process.send) await serve();

async function serve() {
  let callNumber = 0;
  let sinkRequests = 0;
  let sinkBytes = 0;
  const model = createServer(async (request, response) => {
    const parts = [];
    for await (const part of request) parts.push(part);
    const body = JSON.parse(Buffer.concat(parts).toString("utf8"));
    response.writeHead(200, { "content-type": "text/event-stream" });
    const base = { id: "bench", object: "chat.completion.chunk", created: 0, model: body.model };
    const send = (choices, extra = {}) =>
      response.write(`data: ${JSON.stringify({ ...base, choices, ...extra })}\n\n`);
    const usage = { prompt_tokens: 100, completion_tokens: 10, total_tokens: 110 };
    if (!body.tools) {
      // A request without tools is a compaction summary.
      send([
        {
          index: 0,
          delta: { role: "assistant", content: "Summary: noop was called, all fine." },
          finish_reason: null,
        },
      ]);
      send([{ index: 0, delta: {}, finish_reason: "stop" }]);
    } else if (toolResults(body.messages) < plannedRounds(body.messages)) {
      callNumber += 1;
      const id = `call_${callNumber}`;
      const argumentsText = JSON.stringify({ round: callNumber });
      const half = Math.floor(argumentsText.length / 2);
      const call = { index: 0, id, type: "function", function: { name: "noop", arguments: "" } };
      send([
        { index: 0, delta: { role: "assistant", content: null, tool_calls: [call] }, finish_reason: null },
      ]);
      // The arguments split across two chunks, as real servers stream them.
      for (const piece of [argumentsText.slice(0, half), argumentsText.slice(half)])
        send([
          {
            index: 0,
            delta: { tool_calls: [{ index: 0, function: { arguments: piece } }] },
            finish_reason: null,
          },
        ]);
      send([{ index: 0, delta: {}, finish_reason: "tool_calls" }]);
    } else {
      send([{ index: 0, delta: { role: "assistant", content: "All rounds done." }, finish_reason: null }]);
      send([{ index: 0, delta: {}, finish_reason: "stop" }]);
    }
    if (body.stream_options?.include_usage) send([], { usage });
    response.end("data: [DONE]\n\n");
  });
  const sink = createServer(async (request, response) => {
    for await (const part of request) sinkBytes += part.length;
    sinkRequests += 1;
    response.writeHead(200, { "content-type": "application/x-protobuf" });
    response.end();
  });
  for (const server of [model, sink]) {
    // Kept-alive sockets outlive a pause between runs on a loaded machine (the default is 5 s).
    server.keepAliveTimeout = 120_000;
    server.listen(0, "127.0.0.1");
    await once(server, "listening");
  }
  process.on("message", (message) => {
    if (message.stats) {
      const cpu = process.cpuUsage();
      process.send({ sinkRequests, sinkBytes, cpuMilliseconds: (cpu.user + cpu.system) / 1000 });
    }
  });
  process.on("disconnect", () => {
    for (const server of [model, sink]) {
      server.closeAllConnections();
      server.close();
    }
  });
  process.send({
    modelUrl: `http://127.0.0.1:${model.address().port}/v1`,
    sinkUrl: `http://127.0.0.1:${sink.address().port}`,
  });
}

/** N of the task's "Call noop <N> times." (0 when the conversation has no such task). */
function plannedRounds(messages) {
  for (const message of messages) {
    const found = message.role === "user" && /Call noop (\d+) times/.exec(message.content ?? "");
    if (found) return Number(found[1]);
  }
  return 0;
}

function toolResults(messages) {
  let count = 0;
  for (const message of messages) if (message.role === "tool") count += 1;
  return count;
}
