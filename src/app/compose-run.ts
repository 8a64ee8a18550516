import { ApprovalBroker } from "../approvals/approval-broker.js";
import { QuestionBroker } from "../questions/question-broker.js";
import type { Config } from "../config/config-schema.js";
import type { AgentDefinition } from "../definitions/agent-definition.js";
import type { AgentEvent, EventDraft } from "../events/agent-event.js";
import { EventBus } from "../events/event-bus.js";
import { ModelClient, type ModelProvider } from "../llm/model-client.js";
import { createLogger, type Logger } from "../logging/logger.js";
import { executeRun } from "../runs/execute-run.js";
import { RunControl } from "../runs/run-control.js";
import { createRunIdSource } from "../runs/run-id.js";
import type { RunRecord } from "../runs/run-record.js";
import type { RunReason } from "../runs/run-status.js";
import { learnVaultSecrets } from "../secrets/learn-vault-secrets.js";
import { protectConfigSecrets } from "../secrets/protect-config-secrets.js";
import { protectVaultMaterial } from "../secrets/protect-vault-material.js";
import { createSecretLearner } from "./daemon-secrets.js";
import { withRunEndHooks } from "../hooks/run-end-hooks.js";
import { SandboxHost } from "../sandbox/sandbox-host.js";
import { SecretRedactor } from "../secrets/secret-redactor.js";
import { createToolExecutor } from "../tools/create-tool-executor.js";
import type { ToolExecutor } from "../tools/tool-executor.js";
import { createVault } from "../vault/create-vault.js";
import { resolveConfigSecrets } from "../vault/resolve-config-secrets.js";
import { LlmWorker } from "../workers/llm/llm-worker.js";
import { createCliWorker } from "../workers/cli/create-cli-worker.js";
import type { Worker } from "../workers/worker.js";

export interface SingleRunOptions {
  config: Config;
  /** The config file read, if any: the sandbox hides its folder from agents working elsewhere. */
  configFile?: string | undefined;
  definition: AgentDefinition;
  task: string;
  /** Called with every event of the run, in order, as it is published. */
  onEvent: (event: AgentEvent) => void;
  /** Overrides for tests and for the integrator: the model, the tools, the worker. */
  model?: ModelProvider;
  tools?: ToolExecutor;
  worker?: Worker;
  logger?: Logger;
}

/** One run in this process: its id, how to stop it, and its record once it ends. */
export interface SingleRun {
  runId: string;
  /** Stops the run; it ends `stopped` with this reason (default `user_stop`). */
  stop(reason?: RunReason): void;
  /** The run record, settled when the run ends (never rejects). */
  finished: Promise<RunRecord>;
  /** The run's `ask` calls: `onRequested` to prompt a human, `decide` to answer. */
  approvals: ApprovalBroker;
  /** The run's `ask_human` questions: `onAsked` to prompt a human, `answer` to answer. */
  questions: QuestionBroker;
}

/**
 * Composes and starts one run of one agent in-process, for `agentd run`: config secrets resolved
 * from the vault, an event bus that masks secret values, the model client, the LLM worker, a
 * RunControl with the agent's timeout. It publishes the `status` events itself, as the run manager
 * does in the daemon. Run records and events are not written to `data_dir`.
 */
export async function startSingleRun(options: SingleRunOptions): Promise<SingleRun> {
  const { definition, task } = options;
  const redactor = new SecretRedactor();
  const vault = createVault(options.config);
  const config = await resolveConfigSecrets(options.config, vault, redactor);
  protectConfigSecrets(config, redactor);
  protectVaultMaterial(config, redactor);
  const logger = options.logger ?? createLogger({ ...config.log, redact: redactor.redactText });
  // Every vault value is masked, declared by this agent or not (its shell could print any of them).
  if (definition.frontmatter.secrets.length > 0) await learnVaultSecrets(vault, redactor);
  else await createSecretLearner({ vault, config, redactor }, logger.child({ module: "vault" })).refresh();

  const events = new EventBus({ redact: redactor.redactEvent });
  events.subscribe(options.onEvent);
  const approvals = new ApprovalBroker({ redact: (value) => redactor.redactValue(value) });
  const questions = new QuestionBroker({ redact: (value) => redactor.redactValue(value) });
  const sandbox = new SandboxHost({ config, configFile: options.configFile });
  // MCP servers start on first use, so this costs nothing when the caller brings its own tools.
  const defaultTools = createToolExecutor({
    config,
    vault,
    redactor,
    approvals,
    questions,
    sandbox,
    logger: logger.child({ module: "tools" }),
  });
  const tools = options.tools ?? defaultTools;
  const worker =
    options.worker ??
    withRunEndHooks(workerFor(definition, config, tools, sandbox, options.model, logger), defaultTools.hooks);
  const runId = createRunIdSource()();
  const control = new RunControl({ timeoutMilliseconds: definition.limits.timeout });
  const startedAt = new Date().toISOString();
  const publishStatus = (data: Extract<EventDraft, { type: "status" }>["data"]) =>
    events.publish({ agent: definition.id, run: runId, type: "status", data });
  publishStatus({ status: "running" });
  const finished = executeRun(
    worker,
    // Only an approval parks the run: `waiting` while it is asked, `running` once answered.
    { runId, definition, task, control, events, setStatus: (status) => publishStatus({ status }) },
    logger.child({ module: "run" }),
  ).then((outcome): RunRecord => {
    control.dispose();
    publishStatus({
      status: outcome.status,
      ...(outcome.reason === undefined ? {} : { reason: outcome.reason }),
      ...(outcome.error === undefined ? {} : { message: outcome.error.message }),
    });
    // The worker's answer may quote a secret (a CLI tool reading a .env file): masked like events.
    return redactor.redactValue<RunRecord>({
      id: runId,
      agent: definition.id,
      task,
      status: outcome.status,
      ...(outcome.reason === undefined ? {} : { reason: outcome.reason }),
      trigger: { kind: "cli" },
      definition_hash: definition.hash,
      worker: outcome.worker,
      created_at: startedAt,
      started_at: startedAt,
      ended_at: new Date().toISOString(),
      usage: outcome.usage,
      cost_usd: outcome.cost_usd,
      ...(outcome.result === undefined ? {} : { result: outcome.result }),
      ...(outcome.error === undefined ? {} : { error: outcome.error }),
    });
  });
  // The run's MCP servers end with it: `agentd run` exits only once they are gone.
  const finishedAndClosed = finished.finally(() => defaultTools.close());
  return {
    runId,
    stop: (reason = "user_stop") => control.stop(reason, `stopped: ${reason}`),
    finished: finishedAndClosed,
    approvals,
    questions,
  };
}

function workerFor(
  definition: AgentDefinition,
  config: Config,
  tools: ToolExecutor,
  sandbox: SandboxHost,
  model: ModelProvider | undefined,
  logger: Logger,
): Worker {
  // Status events come from startSingleRun, as they come from the run manager in the daemon.
  const llmWorker = new LlmWorker({
    model: model ?? ModelClient.fromConfig(config.llm),
    tools,
    llm: config.llm,
    publishStatus: false,
  });
  if (definition.frontmatter.worker !== "cli") return llmWorker;
  return createCliWorker({
    config,
    llmFallback: llmWorker,
    // The CLI worker names its own module: a second child with the same key would repeat it.
    logger,
    dataDirectory: config.data_dir,
    sandbox,
  });
}
