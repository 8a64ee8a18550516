import path from "node:path";
import type { Config } from "../../config/config-schema.js";
import type { Logger } from "../../logging/logger.js";
import { SandboxHost } from "../../sandbox/sandbox-host.js";
import type { CliCooldownRecords } from "./cli-cooldown-records.js";
import { COOLDOWNS_FILE_NAME, CliCooldowns } from "./cli-cooldowns.js";
import { CliWorker, type LlmFallback } from "./cli-worker.js";

export { COOLDOWNS_FILE_NAME } from "./cli-cooldowns.js";
/** The folder in `data_dir` holding each CLI run's private TMPDIR while it runs. */
export const RUNS_DIRECTORY_NAME = "cli-runs";

export interface CreateCliWorkerOptions {
  config: Config;
  /** The daemon's LLM worker: where failed CLI runs continue. */
  llmFallback: LlmFallback;
  logger: Logger;
  /** The resolved `data_dir`: each CLI run's TMPDIR, and the cooldowns when `cooldowns` is not given. */
  dataDirectory: string;
  /** The store's cooldowns (shared by the cluster with PostgreSQL); default: `<data_dir>/cli-cooldowns.json`. */
  cooldowns?: CliCooldownRecords;
  /** True when agentd's sandbox contains every CLI child (see CliWorkerOptions). */
  outerSandbox?: boolean;
  /** The daemon's sandbox; default: one for `config`. */
  sandbox?: SandboxHost;
  /** Masks a secret cut in two where the CLI's output is cut (see CliWorkerOptions). */
  redactCutEnd?: (text: string) => string;
  redactCutStart?: (text: string) => string;
  now?: () => Date;
}

/**
 * The CLI worker for the composition root: one instance for the whole daemon (it holds the tools'
 * cooldowns), returned by `workerFor(definition)` for every agent with `worker: cli`.
 */
export function createCliWorker(options: CreateCliWorkerOptions): CliWorker {
  const cooldowns =
    options.cooldowns ??
    new CliCooldowns({
      file: path.join(options.dataDirectory, COOLDOWNS_FILE_NAME),
      logger: options.logger,
      ...(options.now ? { now: options.now } : {}),
    });
  return new CliWorker({
    config: options.config,
    llmFallback: options.llmFallback,
    cooldowns,
    runsDirectory: path.join(options.dataDirectory, RUNS_DIRECTORY_NAME),
    ...(options.outerSandbox === undefined ? {} : { outerSandbox: options.outerSandbox }),
    sandbox: options.sandbox ?? new SandboxHost({ config: options.config }),
    logger: options.logger,
    ...(options.redactCutEnd ? { redactCutEnd: options.redactCutEnd } : {}),
    ...(options.redactCutStart ? { redactCutStart: options.redactCutStart } : {}),
    ...(options.now ? { now: options.now } : {}),
  });
}
