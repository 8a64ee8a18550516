import { Worker } from "node:worker_threads";
import { AgentdError } from "../../errors/agentd-error.js";

/**
 * The worker's whole program, plain JavaScript run with `eval: true`: a worker file would exist as
 * `.js` only in dist/, not beside the `.ts` sources the tests run. It answers each batch of lines
 * with the indexes of those the expression matches.
 */
const WORKER_SOURCE = `
const { parentPort, workerData } = require("node:worker_threads");
const expression = new RegExp(workerData.pattern);
parentPort.on("message", (lines) => {
  const found = [];
  for (let index = 0; index < lines.length; index++) {
    if (expression.test(lines[index])) found.push(index);
  }
  parentPort.postMessage(found);
});
`;

export interface RegexWorkerOptions {
  /** Ends the matching at once (terminates the worker) and rejects with its reason. */
  signal: AbortSignal;
  /** Time the worker may spend matching, summed over all batches, before TOOL_TIMEOUT. */
  budgetMilliseconds: number;
}

/**
 * Matches a regular expression (any the model writes, so possibly catastrophic) in a worker
 * thread, so that no pattern can freeze the daemon's event loop. The worker is terminated on
 * abort and when the time budget runs out, whatever it is doing.
 */
export class RegexWorker {
  readonly #pattern: string;
  readonly #options: RegexWorkerOptions;
  #worker: Worker | undefined;
  #spent = 0;

  /** `pattern` must compile as a RegExp (the caller checked). The thread starts on first use. */
  constructor(pattern: string, options: RegexWorkerOptions) {
    this.#pattern = pattern;
    this.#options = options;
  }

  /** The indexes of the lines that match, ascending. */
  async matching(lines: string[]): Promise<number[]> {
    const { signal, budgetMilliseconds } = this.#options;
    signal.throwIfAborted();
    const started = performance.now();
    this.#worker ??= new Worker(WORKER_SOURCE, { eval: true, workerData: { pattern: this.#pattern } });
    const worker = this.#worker;
    let cleanUp = () => {};
    try {
      return await new Promise<number[]>((resolve, reject) => {
        const aborted = () => reject(signal.reason);
        const failed = (error: Error) =>
          reject(
            new AgentdError("TOOL_FAILED", `the search worker failed: ${error.message}`, { cause: error }),
          );
        const exited = (code: number) =>
          reject(new AgentdError("TOOL_FAILED", `the search worker stopped (exit code ${code})`));
        const left = Math.max(0, budgetMilliseconds - this.#spent);
        const timer = setTimeout(() => reject(timedOut(budgetMilliseconds)), left);
        cleanUp = () => {
          clearTimeout(timer);
          signal.removeEventListener("abort", aborted);
          worker.off("message", resolve).off("error", failed).off("exit", exited);
        };
        signal.addEventListener("abort", aborted, { once: true });
        worker.once("message", resolve).once("error", failed).once("exit", exited);
        worker.postMessage(lines);
      });
    } finally {
      cleanUp();
      this.#spent += performance.now() - started;
    }
  }

  /** Ends the worker (also mid-match). */
  async close(): Promise<void> {
    await this.#worker?.terminate();
  }
}

function timedOut(budgetMilliseconds: number): AgentdError {
  return new AgentdError("TOOL_TIMEOUT", `the pattern took too long (over ${budgetMilliseconds} ms)`, {
    hint: "use a simpler pattern or a plain text search",
  });
}
