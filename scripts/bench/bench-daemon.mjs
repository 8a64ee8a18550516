// What the benches that run agentd share: a project folder of agent files, the daemon built by the
// real composition root (dist/app/daemon.js) on it with a silent logger, and a scripted
// OpenAI-compatible model to point it at. Not a bench itself (run-all runs *.bench.mjs only).
import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { createServer } from "node:http";
import { tmpdir } from "node:os";
import path from "node:path";
import { clearTimeout, setTimeout } from "node:timers";

/** A chat completion that ends the run: one answer, no tool call. */
export const FINAL_ANSWER = JSON.stringify({
  id: "chatcmpl-bench",
  object: "chat.completion",
  created: 0,
  model: "bench",
  choices: [{ index: 0, message: { role: "assistant", content: "done" }, finish_reason: "stop" }],
  usage: { prompt_tokens: 10, completion_tokens: 1, total_tokens: 11 },
});

/** FINAL_ANSWER as a streamed completion (the loop asks with `stream: true`): one chunk, then [DONE]. */
export const FINAL_ANSWER_STREAM = `data: ${JSON.stringify({
  id: "chatcmpl-bench",
  object: "chat.completion.chunk",
  created: 0,
  model: "bench",
  choices: [{ index: 0, delta: { role: "assistant", content: "done" }, finish_reason: "stop" }],
  usage: { prompt_tokens: 10, completion_tokens: 1, total_tokens: 11 },
})}\n\ndata: [DONE]\n\n`;

/**
 * A model server on 127.0.0.1 that answers every chat completion with FINAL_ANSWER (streamed when
 * the request asks for a stream) after
 * `delayMilliseconds` (0: at once); `onRequest` sees each request as it arrives. Resolves with its port once it listens. Run it in a worker
 * thread, so it does not share the measured event loop.
 */
export function serveFinalAnswers({ delayMilliseconds = 0, onRequest } = {}) {
  const server = createServer((request, response) => {
    onRequest?.(request);
    let body = "";
    request.setEncoding("utf8");
    request.on("data", (chunk) => (body += chunk));
    request.on("end", () => {
      const streamed = /"stream"\s*:\s*true/.test(body);
      const answer = () => {
        response.writeHead(200, { "content-type": streamed ? "text/event-stream" : "application/json" });
        response.end(streamed ? FINAL_ANSWER_STREAM : FINAL_ANSWER);
      };
      if (delayMilliseconds === 0) return answer();
      const timer = setTimeout(answer, delayMilliseconds);
      response.on("close", () => clearTimeout(timer));
    });
  });
  return new Promise((resolve) => server.listen(0, "127.0.0.1", () => resolve(server.address().port)));
}

/**
 * A temporary project: `agents/` holding each `{ name: file text }` as `<name>.md`, and an empty
 * `presets/`. Returns its root; remove it when done.
 */
export function createBenchProject(prefix, agents) {
  const root = mkdtempSync(path.join(tmpdir(), prefix));
  for (const folder of ["agents", "presets"]) mkdirSync(path.join(root, folder));
  for (const [name, text] of Object.entries(agents))
    writeFileSync(path.join(root, "agents", `${name}.md`), text);
  return root;
}

/**
 * The daemon on a project made by createBenchProject, its data in `<root>/data` (or `dataDirectory`),
 * its model the server on `modelPort`, an ephemeral API port and no logs. `settings` adds config
 * keys (`concurrency`, `limits`, …).
 */
export async function startBenchDaemon({ root, modelPort, dataDirectory, settings = {} }) {
  const { startDaemon } = await import("../../dist/app/daemon.js");
  const { ConfigSchema } = await import("../../dist/config/config-schema.js");
  const { createLogger } = await import("../../dist/logging/logger.js");
  const config = ConfigSchema.parse({
    agents_dir: path.join(root, "agents"),
    presets_dir: path.join(root, "presets"),
    data_dir: dataDirectory ?? path.join(root, "data"),
    server: { port: 0 },
    llm: { base_url: `http://127.0.0.1:${modelPort}/v1`, api_key: "bench", model: "bench" },
    log: { level: "silent" },
    ...settings,
  });
  const logger = createLogger({ level: "silent", pretty: false });
  const daemon = await startDaemon({ config, version: "bench", overrides: { logger } });
  // As `agentd start` does once it is up (src/cli/stop-pretenuring.ts), or the bench would measure
  // a daemon that does not exist; AGENTD_BENCH_PRETENURING=1 keeps V8's default, to compare.
  if (process.env.AGENTD_BENCH_PRETENURING !== "1") {
    const { stopPretenuring } = await import("../../dist/cli/stop-pretenuring.js");
    stopPretenuring();
  }
  return daemon;
}

/** The middle value and the range of a list of numbers. */
export function spread(values) {
  const sorted = [...values].sort((left, right) => left - right);
  return { median: sorted[Math.floor(sorted.length / 2)], min: sorted[0], max: sorted.at(-1) };
}

/**
 * Whether the bench runs in its quick mode (`--quick` or AGENTD_BENCH_QUICK=1): a few iterations,
 * enough to show that it runs and prints its ratios, not to measure (the test suite runs them so).
 */
export const QUICK = process.argv.includes("--quick") || process.env.AGENTD_BENCH_QUICK === "1";
