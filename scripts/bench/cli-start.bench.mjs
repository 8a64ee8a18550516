// CLI start-up benchmark: how long `agentd run` takes from the process's spawn to its first LLM
// request, with 1,000 agents in the folder, against a bare `node -e` that sends one fetch to the
// same server (Node's own start-up and one request: the floor any CLI pays). The server records
// when each request arrives. Also `agentd --help` against `node -e 0`.
// Target (absolute): first request within 250 ms of the spawn on an idle machine; the ratio to the
// bare fetch is the figure that survives a busy machine.
// `agentd` is started as a user's shell starts it: the bin linked into node_modules/.bin as npm
// links it, run through its #! line (with this Node first on PATH).
// Imports nothing from dist/, but runs bin/agentd.js: `npm run bench` builds first.
import { spawn } from "node:child_process";
import { once } from "node:events";
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { createServer } from "node:http";
import os, { tmpdir } from "node:os";
import { performance } from "node:perf_hooks";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { QUICK } from "./bench-daemon.mjs";

const AGENTS = QUICK ? 100 : 1_000;
const REPETITIONS = QUICK ? 1 : 7;
const TARGET_MILLISECONDS = 250;

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");
const agentdBin = path.join(root, "bin", "agentd.js");
const project = mkdtempSync(path.join(tmpdir(), "agentd-bench-cli-start-"));
const agentdLink = path.join(project, "node_modules", ".bin", "agentd");
/** The children find this Node first, as `#!/usr/bin/env node` looks it up. */
const environment = {
  ...process.env,
  PATH: `${path.dirname(process.execPath)}${path.delimiter}${process.env.PATH ?? ""}`,
};
const arrivals = [];
const server = await startServer();
const url = `http://127.0.0.1:${server.address().port}/v1`;

try {
  writeProject();
  const [loadAverage] = os.loadavg();
  console.log(
    `machine: ${os.cpus().length} cores, load average ${loadAverage?.toFixed(1)} (wall times grow when it exceeds the cores)`,
  );
  console.log(`project: ${AGENTS} agents; ${REPETITIONS} alternating runs of each, after one warm-up each`);
  const bareFetch = `fetch(${JSON.stringify(`${url}/chat/completions`)}, { method: "POST", body: "{}" }).then((response) => response.text())`;
  const bare = () => toFirstRequest(["-e", bareFetch]);
  const run = () => toFirstRequest(["run", "agent-0001", "say hi"], agentdLink);
  await bare();
  await run();
  const bareTimes = [];
  const runTimes = [];
  for (let repetition = 0; repetition < REPETITIONS; repetition += 1) {
    bareTimes.push(await bare());
    runTimes.push(await run());
  }
  row("node -e fetch", bareTimes);
  row("agentd run", runTimes);
  const verdict = median(runTimes) <= TARGET_MILLISECONDS ? "ok" : "OVER TARGET";
  console.log(
    `  spawn → first request: agentd run median ${median(runTimes).toFixed(0)} ms (target < ${TARGET_MILLISECONDS} ms) ${verdict}; ratio to node -e fetch ${ratios(runTimes, bareTimes)}`,
  );

  const helpTimes = [];
  const emptyTimes = [];
  for (let repetition = 0; repetition < REPETITIONS; repetition += 1) {
    emptyTimes.push(await toExit(["-e", "0"]));
    helpTimes.push(await toExit(["--help"], agentdLink));
  }
  row("node -e 0", emptyTimes);
  row("agentd --help", helpTimes);
  console.log(`  spawn → exit: ratio to node -e 0 ${ratios(helpTimes, emptyTimes)}`);
} finally {
  server.close();
  server.closeAllConnections();
  rmSync(project, { recursive: true, force: true });
}

function writeProject() {
  mkdirSync(path.dirname(agentdLink), { recursive: true });
  symlinkSync(agentdBin, agentdLink);
  const agents = path.join(project, "agents");
  mkdirSync(agents);
  for (let index = 0; index < AGENTS; index += 1) {
    const id = `agent-${String(index).padStart(4, "0")}`;
    writeFileSync(
      path.join(agents, `${id}.md`),
      `---\ndescription: Bench agent ${index}\ntask: Say hi\n---\nYou are bench agent ${index}.\n`,
    );
  }
  writeFileSync(
    path.join(project, "config.yaml"),
    [
      "llm:",
      `  base_url: ${url}`,
      "  api_key: bench-key",
      "  model: bench",
      "  retries: { max_attempts: 1 }",
      `data_dir: ${path.join(project, "data")}`,
      "log: { level: silent }",
    ].join("\n"),
  );
}

/**
 * Milliseconds from the spawn of `command` (default: this Node) to the server seeing the process's
 * first request; waits for its exit.
 */
async function toFirstRequest(args, command = process.execPath) {
  const seen = arrivals.length;
  const started = performance.now();
  const child = spawn(command, args, { cwd: project, env: environment, stdio: ["ignore", "ignore", "pipe"] });
  let stderr = "";
  child.stderr.setEncoding("utf8").on("data", (chunk) => (stderr += chunk));
  const [code] = await once(child, "exit");
  if (code !== 0 || arrivals.length === seen) {
    throw new Error(`${args.join(" ")} exited ${code} after ${arrivals.length - seen} request(s): ${stderr}`);
  }
  return (arrivals[seen] ?? 0) - started;
}

async function toExit(args, command = process.execPath) {
  const started = performance.now();
  const child = spawn(command, args, { cwd: project, env: environment, stdio: "ignore" });
  await once(child, "exit");
  return performance.now() - started;
}

/** Answers every request with one streamed completion, "hi"; records when each arrived. */
async function startServer() {
  const chunk = {
    id: "bench",
    object: "chat.completion.chunk",
    created: 0,
    model: "bench",
    choices: [{ index: 0, delta: { role: "assistant", content: "hi" }, finish_reason: "stop" }],
    usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 },
  };
  const listening = createServer((request, response) => {
    arrivals.push(performance.now());
    request.resume();
    request.on("end", () => {
      response.writeHead(200, { "content-type": "text/event-stream" });
      response.end(`data: ${JSON.stringify(chunk)}\n\ndata: [DONE]\n\n`);
    });
  }).listen(0, "127.0.0.1");
  await once(listening, "listening");
  return listening;
}

function row(label, times) {
  console.log(
    `  ${label.padEnd(14)} median ${median(times).toFixed(0)} ms, min ${Math.min(...times).toFixed(0)} ms, max ${Math.max(...times).toFixed(0)} ms`,
  );
}

/** Each measured time against its baseline of the same repetition (the load of that moment hits both). */
function ratios(times, baselines) {
  const each = times.map((time, index) => time / (baselines[index] ?? time));
  return `median ${median(each).toFixed(2)}, min ${Math.min(...each).toFixed(2)}, max ${Math.max(...each).toFixed(2)}`;
}

function median(values) {
  const sorted = [...values].sort((left, right) => left - right);
  return sorted[Math.floor(sorted.length / 2)] ?? 0;
}
