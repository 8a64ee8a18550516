import type { Config } from "../config/config-schema.js";
import type { AgentDefinition } from "../definitions/agent-definition.js";
import type { ModelProvider } from "../llm/model-client.js";
import type { SandboxHost } from "../sandbox/sandbox-host.js";
import type { ToolExecutor } from "../tools/tool-executor.js";
import type { HookRunner } from "../hooks/hook-runner.js";
import { withRunEndHooks } from "../hooks/run-end-hooks.js";
import type { Logger } from "../logging/logger.js";
import type { CliCooldownRecords } from "../workers/cli/cli-cooldown-records.js";
import { LlmWorker } from "../workers/llm/llm-worker.js";
import type { RunContext, Worker } from "../workers/worker.js";

export interface WorkerParts {
  config: Config;
  model: ModelProvider;
  tools: ToolExecutor;
  sandbox: SandboxHost;
  logger: Logger;
  now: () => Date;
  /** The store's CLI cooldowns; default: `<data_dir>/cli-cooldowns.json`. */
  cooldowns?: CliCooldownRecords;
  /** Runs each agent's `on_run_end` hooks as its runs end; without it they do not run. */
  hooks?: HookRunner;
  /** Masks secret values (the vault's redactor) in what a CLI tool said, before its fallback model reads it. */
  redact?: (text: string) => string;
  /** Masks a secret cut in two where a CLI's output is cut (the redactor's `redactCutEnd`). */
  redactCutEnd?: (text: string) => string;
  /** Masks a secret cut in two where the fallback note cuts a CLI's message from its start. */
  redactCutStart?: (text: string) => string;
}

/**
 * The worker for a definition: the LLM worker, or for `worker: cli` the CLI worker, which falls
 * back to that same LLM worker. The run manager publishes every status change.
 */
export function defaultWorkerFor(parts: WorkerParts): (definition: AgentDefinition) => Worker {
  const llmWorker = new LlmWorker({
    model: parts.model,
    tools: parts.tools,
    llm: parts.config.llm,
  });
  const redact = parts.redact ?? ((text: string) => text);
  // The note tells the model what the CLI tool said and did, read from its output as it was: the
  // events masked that output, the note is masked here.
  const llmFallback = {
    run: (context: RunContext, options?: { note?: string }) =>
      llmWorker.run(
        context,
        options?.note === undefined ? options : { ...options, note: redact(options.note) },
      ),
  };
  // The CLI worker (adapters, process handling, ~30 modules) loads with the first `worker: cli` run.
  let cliWorkerLoaded: Promise<Worker> | undefined;
  const cliWorker: Worker = {
    run: async (context) => {
      cliWorkerLoaded ??= import("../workers/cli/create-cli-worker.js").then(({ createCliWorker }) =>
        createCliWorker({
          config: parts.config,
          llmFallback,
          logger: parts.logger,
          dataDirectory: parts.config.data_dir,
          ...(parts.cooldowns ? { cooldowns: parts.cooldowns } : {}),
          sandbox: parts.sandbox,
          ...(parts.redactCutEnd ? { redactCutEnd: parts.redactCutEnd } : {}),
          ...(parts.redactCutStart ? { redactCutStart: parts.redactCutStart } : {}),
          now: parts.now,
        }),
      );
      return (await cliWorkerLoaded).run(context);
    },
  };
  const hooks = parts.hooks;
  const llm = hooks ? withRunEndHooks(llmWorker, hooks) : llmWorker;
  const cli = hooks ? withRunEndHooks(cliWorker, hooks) : cliWorker;
  return (definition) => (definition.frontmatter.worker === "cli" ? cli : llm);
}
