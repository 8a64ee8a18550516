import { setMaxListeners } from "node:events";
import { ApprovalBroker } from "../approvals/approval-broker.js";
import type { AgentDefinition } from "../definitions/agent-definition.js";
import type { DefinitionSnapshot } from "../definitions/definition-snapshot.js";
import { EventBus, type EventHub } from "../events/event-bus.js";
import { EventStore } from "../events/event-store.js";
import { ModelClient, type ModelProvider } from "../llm/model-client.js";
import type { Logger } from "../logging/logger.js";
import { QuestionBroker } from "../questions/question-broker.js";
import type { AgentLookup } from "../runs/agent-availability.js";
import { RunManager } from "../runs/run-manager.js";
import { SandboxHost } from "../sandbox/sandbox-host.js";
import type { DurableStore } from "../store/durable-store.js";
import { SubAgentTools } from "../subagents/sub-agent-tools.js";
import { createToolExecutor } from "../tools/create-tool-executor.js";
import type { ToolExecutor } from "../tools/tool-executor.js";
import type { Worker } from "../workers/worker.js";
import {
  type DaemonSecrets,
  type SecretLearner,
  createSecretLearner,
  learningSecretsFirst,
} from "./daemon-secrets.js";
import { agentLookupFrom } from "./agent-lookup.js";
import { defaultWorkerFor } from "./default-parts.js";

export interface RunCoreOptions {
  /** The vault, the config with `{{secret:…}}` resolved, and the redactor that knows the values. */
  secrets: DaemonSecrets;
  /** Where run records, events and checkpoints are kept (config `store`); the caller closes it. */
  store: DurableStore;
  /** The config file read, if any: the sandbox hides its folder from agents working elsewhere. */
  configFile?: string | undefined;
  logger: Logger;
  now: () => Date;
  /** The agents loaded: the daemon's registry, or what `agentd run` read. */
  definitions: () => DefinitionSnapshot;
  /** Which agents runs may be started for; default: the valid, enabled ones of `definitions`. */
  agents?: AgentLookup | undefined;
  /**
   * Runs a previous daemon left `queued`: queued again here (the daemon), or left as they are for
   * the daemon's next start (`agentd run`, which runs only its own run).
   */
  requeueQueuedRuns: boolean;
  /**
   * Runs started here go through the cluster's queue when the store has one (the daemon); without
   * it (`agentd run`) the run stays in this process.
   */
  shareQueue?: boolean | undefined;
  /** Swapped in by tests and benchmarks: the LLM endpoint, every tool call, the worker per definition. */
  model?: ModelProvider | undefined;
  tools?: ToolExecutor | undefined;
  workerFor?: ((definition: AgentDefinition) => Worker) | undefined;
}

/** What runs are made of: the same in the daemon and in `agentd run`. */
export interface RunCore {
  /** Every event, masked, with per-agent ids continued from the store. */
  readonly bus: EventHub;
  /** Every event stored (through the store's event log) before anyone else sees it; polls and waits. */
  readonly events: EventStore;
  /** `ask` tool calls parked for a human: the API, the CLI or a terminal prompt answers them. */
  readonly approvals: ApprovalBroker;
  /** `ask_human` questions, answered the same ways. */
  readonly questions: QuestionBroker;
  readonly sandbox: SandboxHost;
  readonly model: ModelProvider;
  /** Keeps the redactor's knowledge of the vault current; tell it when the definitions change. */
  readonly secretLearner: SecretLearner;
  /** Queue, records, status events, sub-agents; crash recovery done. */
  readonly runs: RunManager;
  /** The root of every run's signal: aborted, it stops every run (shutdown). */
  readonly shutdownController: AbortController;
  /** Ends the MCP servers the built-in tool executor started. */
  closeTools(): Promise<void>;
}

/**
 * The one place runs are assembled: the event bus with its store subscribed first (every event is
 * stored before it is shown), the approval and question brokers, the sandbox, the tool executor
 * with the sub-agent tools, the model, the workers (each run starts once the redactor knows the
 * vault) and the run manager over the stores. The daemon adds the registry, the scheduler and the
 * API around it; `agentd run` starts one run on it. The caller holds the data folder's lock.
 */
export async function composeRunCore(options: RunCoreOptions): Promise<RunCore> {
  const { secrets, logger, now } = options;
  const agents = options.agents ?? agentLookupFrom(options.definitions);
  const { config, redactor } = secrets;
  const { store } = options;
  const bus: EventHub =
    store.createBus?.({ now, redact: redactor.redactEvent }) ??
    new EventBus({ now, redact: redactor.redactEvent });
  const events = await EventStore.open({
    dataDirectory: config.data_dir,
    bufferSize: config.events.buffer_size,
    bus,
    logger: logger.child({ module: "events" }),
    log: store.events,
  });
  // Every listener of the bus is subscribed: the store may start following the other nodes.
  await store.start();
  const redactValue = <Value>(value: Value): Value => redactor.redactValue(value);
  const approvals = new ApprovalBroker({ now, redact: redactValue });
  const questions = new QuestionBroker({ now, redact: redactValue });
  const sandbox = new SandboxHost({ config, configFile: options.configFile });
  // MCP servers start on first use, so this costs nothing when a caller brings its own tools.
  const defaultTools = createToolExecutor({
    config,
    vault: secrets.vault,
    redactor,
    approvals,
    questions,
    sandbox,
    logger: logger.child({ module: "tools" }),
    // The run manager is built below; a sub-agent call only comes once runs are running.
    sources: [new SubAgentTools({ agents, children: { runChild: (request) => runs.runChild(request) } })],
  });
  const tools = options.tools ?? defaultTools;
  const model = options.model ?? ModelClient.fromConfig(config.llm);
  const secretLearner = createSecretLearner(secrets, logger.child({ module: "vault" }));
  // Before recovery queues runs again: whether any agent declares secrets decides reading the keychain.
  secretLearner.definitionsChanged(options.definitions());
  const shutdownController = new AbortController();
  // Every run in flight listens to this signal: hundreds of listeners are expected, not a leak.
  setMaxListeners(0, shutdownController.signal);
  const runs: RunManager = new RunManager({
    store: store.runs,
    events: bus,
    agents,
    workerFor: learningSecretsFirst(
      options.workerFor ??
        defaultWorkerFor({ config, model, tools, sandbox, logger, now, hooks: defaultTools.hooks }),
      secretLearner,
    ),
    concurrency: config.concurrency,
    shutdownSignal: shutdownController.signal,
    redact: redactValue,
    prepareRunLog: (run) => events.prepareRun(run),
    checkpoints: store.checkpoints,
    requeueQueuedRuns: options.requeueQueuedRuns,
    // On a shared store, unfinished runs are other nodes' until their lease says otherwise.
    recover: store.cluster === undefined,
    sharedQueue: options.shareQueue === true ? store.queue : undefined,
    node: store.cluster?.node,
    logger: logger.child({ module: "runs" }),
    now,
  });
  for (const run of runs.recovered) {
    logger.warn({ run: run.id, agent: run.agent }, "run interrupted by a crash marked failed (crashed)");
  }
  return {
    bus,
    events,
    approvals,
    questions,
    sandbox,
    model,
    secretLearner,
    runs,
    shutdownController,
    closeTools: () => defaultTools.close(),
  };
}
