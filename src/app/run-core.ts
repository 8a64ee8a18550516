import { setMaxListeners } from "node:events";
import { ApprovalBroker } from "../approvals/approval-broker.js";
import { type Clock, dateSource, systemClock } from "../clock/clock.js";
import { OffsetClock } from "../clock/offset-clock.js";
import type { Config } from "../config/config-schema.js";
import { configuredRetention } from "../config/retention-settings.js";
import type { AgentDefinition } from "../definitions/agent-definition.js";
import type { DefinitionSnapshot } from "../definitions/definition-snapshot.js";
import { EventBus, type EventHub } from "../events/event-bus.js";
import { EventStore } from "../events/event-store.js";
import { ModelClient, type ModelProvider } from "../llm/model-client.js";
import { DataDirectoryLock, type LockHolder } from "../locks/data-directory-lock.js";
import { createLogger, type Logger } from "../logging/logger.js";
import { QuestionBroker } from "../questions/question-broker.js";
import type { AgentLookup } from "../runs/agent-availability.js";
import { RunManager } from "../runs/run-manager.js";
import type { RunRecord } from "../run-vocabulary/run-record.js";
import { SandboxHost } from "../sandbox/sandbox-host.js";
import type { DurableStore } from "../store/durable-store.js";
import { openStore } from "../store/open-store.js";
import { SubAgentTools } from "../subagents/sub-agent-tools.js";
import { createToolExecutor } from "./create-tool-executor.js";
import type { ToolExecutor } from "../tools/tool-executor.js";
import type { Vault } from "../vault/vault.js";
import type { Worker } from "../workers/worker.js";
import {
  type DaemonSecrets,
  prepareSecrets,
  type SecretLearner,
  createSecretLearner,
  learningSecretsEachTurn,
  learningSecretsFirst,
} from "./daemon-secrets.js";
import { agentLookupFrom } from "./agent-lookup.js";
import { defaultWorkerFor } from "./default-parts.js";
import { maskingCooldowns } from "../workers/cli/cli-cooldown-records.js";
import { maskingCheckpoints } from "../checkpoints/masking-checkpoints.js";
import { haltingWhileStorageFull } from "./storage-halted-workers.js";
import { type CoreTraces, openCoreTraces } from "../telemetry/core-traces.js";
import { tracedWorkerFor, tracedTools } from "../telemetry/core-traces.js";
import { tracedModel } from "../telemetry/traced-model.js";
import { type Deliveries, createDeliveries } from "../deliveries/deliveries.js";
import { createMemoryParts, finishedRunsBefore } from "../memory/memory-parts.js";
import { withMemoryContext } from "../memory/memory-context-worker.js";
import { agentsUsingMemory } from "../memory/memory-users.js";
import type { MemoryService } from "../memory/memory-service.js";
import { haltingWhileLeaseLapsed } from "./lease-halted-workers.js";

/** How long a closing core waits for deliveries being sent; the rest resume at the next start. */
const DELIVERY_CLOSE_WAIT_MILLISECONDS = 5_000;

export interface RunCoreOptions {
  /** The vault, the config with `{{secret:…}}` resolved, and the redactor that knows the values. */
  secrets: DaemonSecrets;
  /** Where run records, events and checkpoints are kept (config `store`); the caller closes it. */
  store: DurableStore;
  /** The config file read, if any: the sandbox hides its folder from agents working elsewhere. */
  configFile?: string | undefined;
  logger: Logger;
  /** Everything that waits for time to pass runs on it. */
  clock: Clock;
  /** The clock's time as a Date: stamps records. */
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
   * Runs started here go through the store's run queue (the daemon: on PostgreSQL the cluster's);
   * without it (`agentd run`) the run stays in this process.
   */
  shareQueue?: boolean | undefined;
  /**
   * The model client keeps connections of its own (the daemon: cheaper per request, undici loaded
   * at the first call); without it, Node's global fetch (`agentd run`: nothing more to load).
   */
  ownModelConnections?: boolean | undefined;
  /** Swapped in by tests and benchmarks: the LLM endpoint, every tool call, the worker per definition. */
  model?: ModelProvider | undefined;
  tools?: ToolExecutor | undefined;
  workerFor?: ((definition: AgentDefinition) => Worker) | undefined;
  /** OpenTelemetry traces of the runs (telemetry/), when on. */
  traces?: CoreTraces | undefined;
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
  /** Runs' outcomes sent to their agents' `deliver:` targets (src/deliveries/). */
  readonly deliveries: Deliveries;
  /** Ends the MCP servers the built-in tool executor started. */
  closeTools(): Promise<void>;
  /** The agents' memories (src/memory): what the memory tools and the API read and write. */
  readonly memories: MemoryService;
  /**
   * Sets what is told of each new run once its record is written (the audit trail of run starts).
   * A method, not a field: the core is copied into the opened one, and the run manager calls this.
   */
  whenRunCreated(listener: ((record: RunRecord) => void) | undefined): void;
}

/** The agents a core serves: a snapshot now, and what closes with the core (the daemon's watcher). */
export interface CoreDefinitions {
  snapshot(): DefinitionSnapshot;
  close?(): Promise<void> | void;
}

export interface OpenRunCoreOptions<Definitions extends CoreDefinitions> {
  /** The config as loaded: its `{{secret:…}}` templates are resolved here, from the vault. */
  config: Config;
  /** The config file read, if any: the sandbox hides its folder from agents working elsewhere. */
  configFile?: string | undefined;
  /** Adds to the config once the lock is held, before its secrets are resolved (the daemon's API token). */
  prepareConfig?: ((config: Config) => Config) | undefined;
  /** Who holds the data folder's lock while the core is open (`agentd start`, or `agentd run <agent>`). */
  holder: Pick<LockHolder, "command" | "agent">;
  /**
   * The lock, when the caller took it already (`agentd start` listens before opening the core);
   * the core owns it from here on, as one it took itself.
   */
  lock?: DataDirectoryLock | undefined;
  /** Where secrets live; default: the vault config `vault` names. */
  vault?: Vault | undefined;
  /** The root logger; default: one from config `log` that masks the vault's values. */
  logger?: Logger | undefined;
  /** Where the default logger writes instead of stderr (a file, so a terminal shows only progress). */
  logDestination?: NodeJS.WritableStream | undefined;
  /** The one time source of everything the core makes; default: the system clock. */
  clock?: Clock | undefined;
  /**
   * The agents, loaded once the config's secrets are resolved and before the runs are: runs queued
   * before a restart start again on these definitions.
   */
  loadDefinitions: (context: { config: Config; logger: Logger }) => Promise<Definitions>;
  /** Which agents runs may be started for; default: the valid, enabled ones of the definitions. */
  agents?: ((definitions: Definitions) => AgentLookup) | undefined;
  requeueQueuedRuns: boolean;
  /** Runs go through the store's run queue (the daemon; see RunCoreOptions). */
  shareQueue?: boolean | undefined;
  /** The model client keeps connections of its own (the daemon; see RunCoreOptions). */
  ownModelConnections?: boolean | undefined;
  model?: ModelProvider | undefined;
  tools?: ToolExecutor | undefined;
  workerFor?: ((definition: AgentDefinition) => Worker) | undefined;
}

/** A run core with what it was opened on: the held lock, the resolved config, the logger, the store. */
export interface OpenRunCore<Definitions extends CoreDefinitions> extends RunCore {
  /** The config with `{{secret:…}}` resolved. */
  readonly config: Config;
  readonly secrets: DaemonSecrets;
  readonly logger: Logger;
  readonly clock: Clock;
  readonly now: () => Date;
  readonly store: DurableStore;
  readonly lock: DataDirectoryLock;
  readonly definitions: Definitions;
  /**
   * Waits up to `idleMilliseconds` for runs still going (default: none), then ends the MCP servers,
   * the definitions' watcher, the event log and the store, and releases the data folder. Once.
   */
  close(options?: { idleMilliseconds?: number }): Promise<void>;
}

/**
 * Opens the core the daemon and `agentd run` share, in this order: the data folder's lock first (a
 * second owner would mark the first one's live runs crashed), the vault and the config's secrets,
 * the logger, the definitions, the store, then the runs (run core, crash recovery included). What
 * fails on the way releases what was taken; `close()` releases the rest.
 */
export async function openRunCore<Definitions extends CoreDefinitions>(
  options: OpenRunCoreOptions<Definitions>,
): Promise<OpenRunCore<Definitions>> {
  return DataDirectoryLock.holdWhile(
    options.lock ?? options.config.data_dir,
    options.holder,
    async (lock) => {
      const prepared = options.prepareConfig?.(options.config) ?? options.config;
      const secrets = await prepareSecrets(prepared, options.vault);
      const { config, redactor } = secrets;
      const destination = options.logDestination
        ? { destination: options.logDestination, pretty: false }
        : {};
      const traces = await openCoreTraces({
        settings: config.telemetry,
        redact: redactor.redactText,
        secretsKnown: () => redactor.size,
      });
      const logger =
        options.logger ??
        createLogger({ ...config.log, ...destination, redact: redactor.redactText, mixin: traces.logFields });
      traces.announce(logger);
      // On a cluster, one clock: the database's (each node measures its offset at join and renewal).
      const clock =
        options.clock ?? (config.store.backend === "postgres" ? new OffsetClock(systemClock) : systemClock);
      const now = dateSource(clock);
      const definitions = await options.loadDefinitions({ config, logger });
      let store: DurableStore | undefined;
      try {
        const configuredPolicy = configuredRetention(config.retention);
        store = await openStore({
          config,
          logger,
          now,
          clock,
          // PostgreSQL prunes in the store (one node of the cluster at a time), by each agent's policy.
          retention: (agent) => definitions.snapshot().get(agent)?.retention ?? configuredPolicy,
        });
        const opened = store;
        const core = await composeRunCore({
          secrets,
          store,
          configFile: options.configFile,
          logger,
          clock,
          now,
          definitions: () => definitions.snapshot(),
          agents: options.agents?.(definitions),
          requeueQueuedRuns: options.requeueQueuedRuns,
          shareQueue: options.shareQueue,
          ownModelConnections: options.ownModelConnections,
          model: options.model,
          tools: options.tools,
          workerFor: options.workerFor,
          traces,
        });
        let closing: Promise<void> | undefined;
        const close = async (idleMilliseconds: number) => {
          if (idleMilliseconds > 0) await core.runs.waitUntilIdle(idleMilliseconds);
          // The MCP servers end with the core: nothing it started outlives it.
          await core.closeTools();
          await definitions.close?.();
          // A store still full gives up its waiting writes: the stop does not wait for space.
          opened.storage?.close();
          // Status changes still being written go out before the logs close.
          await core.runs.published();
          // The last spans go out within a bound: a collector that is down does not hold the stop.
          await traces.shutdown();
          await core.deliveries.close(DELIVERY_CLOSE_WAIT_MILLISECONDS);
          core.events.close();
          await opened.close();
          lock.release();
        };
        return {
          ...core,
          config,
          secrets,
          logger,
          clock,
          now,
          store,
          lock,
          definitions,
          close: (closeOptions) => (closing ??= close(closeOptions?.idleMilliseconds ?? 0)),
        };
      } catch (error) {
        await store?.close();
        await definitions.close?.();
        throw error;
      }
    },
  );
}

/**
 * The one place runs are assembled: the event bus with its store subscribed first (every event is
 * stored before it is shown), the approval and question brokers, the sandbox, the tool executor
 * with the sub-agent tools, the model, the workers (each run starts once the redactor knows the
 * vault) and the run manager over the stores. The daemon adds the registry, the scheduler and the
 * API around it; `agentd run` starts one run on it. openRunCore holds the data folder's lock.
 */
async function composeRunCore(options: RunCoreOptions): Promise<RunCore> {
  const { secrets, logger, clock, now } = options;
  const { config, redactor } = secrets;
  const agents = options.agents ?? agentLookupFrom(options.definitions, redactor.redactText);
  const { store } = options;
  const bus: EventHub = store.createBus({ now, redact: redactor.redactEvent });
  const events = await EventStore.open({
    dataDirectory: config.data_dir,
    bufferSize: config.events.buffer_size,
    bus,
    logger: logger.child({ module: "events" }),
    log: store.events,
    ...(store.storage ? { storage: store.storage } : {}),
    clock,
  });
  // Events held while the store was full go out first, in order, once it has room (then the runs go on).
  if (bus instanceof EventBus) store.storage?.onChange((full) => full || bus.releaseHeld());
  // Every listener of the bus is subscribed: the store may start following the other nodes.
  await store.start();
  const redactValue = <Value>(value: Value): Value => redactor.redactValue(value);
  const approvals = new ApprovalBroker({ clock, redact: redactValue });
  const questions = new QuestionBroker({ clock, redact: redactValue });
  const sandbox = new SandboxHost({
    config,
    configFile: options.configFile,
    // Every agent's workdir (explicit or default) is hidden from the others. Both lists are of the
    // definitions, not of the files: made once per snapshot (every tool call asks for them).
    workdirs: sameWhileUnchanged(options.definitions, (snapshot) =>
      snapshot.agents.flatMap((agent) => agent.definition?.workdir ?? []),
    ),
    // A link in any of them could be planted: no agent's read or write path is bound through one.
    writePaths: sameWhileUnchanged(options.definitions, (snapshot) =>
      snapshot.agents.flatMap((agent) => agent.definition?.sandbox.write ?? []),
    ),
    // Every agent's hook scripts are read-only to all agents, not only to the hooked one. The same
    // list while the definitions are the same: the host reads its words once per list.
    hookCommands: sameWhileUnchanged(options.definitions, (snapshot) =>
      snapshot.agents.flatMap(({ definition }) =>
        definition === undefined
          ? []
          : definition.hooks.map((hook) => ({ command: hook.command, workdir: definition.workdir })),
      ),
    ),
  });
  const deliveries = createDeliveries({
    config,
    bus,
    clock,
    vault: secrets.vault,
    redactor,
    logger: logger.child({ module: "deliveries" }),
    definitions: options.definitions,
    sandbox,
    storage: store.storage,
    node: store.cluster.node,
    shared: store.deliveries,
    runEvents: (run, agent) => events.runEvents(run, 0, agent),
  });
  await deliveries.load();
  const memory = createMemoryParts({
    config,
    store: store.memories,
    redact: redactor.redactText,
    handEdits: { events: bus, agentsOf: (key) => agentsUsingMemory(options.definitions(), key) },
    storage: store.storage,
  });
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
    sources: [
      new SubAgentTools({ agents, children: { runChild: (request) => runs.runChild(request) } }),
      deliveries.notifyTools,
      memory.tools,
    ],
  });
  const traced = options.traces?.runs;
  if (traced) bus.subscribe(traced.onEvent);
  const untracedTools = options.tools ?? defaultTools;
  const tools = traced ? tracedTools(untracedTools, traced) : untracedTools;
  const untracedModel =
    options.model ?? ModelClient.fromConfig(config.llm, options.ownModelConnections === true);
  const secretLearner = createSecretLearner(secrets, logger.child({ module: "vault" }));
  const learnedModel =
    secrets.vault.backend === "file" ? learningSecretsEachTurn(untracedModel, secretLearner) : untracedModel;
  const model = traced
    ? tracedModel(learnedModel, { endpoint: config.llm.base_url, content: traced.content })
    : learnedModel;
  // Before recovery queues runs again: whether any agent declares secrets decides reading the keychain.
  secretLearner.definitionsChanged(options.definitions());
  const shutdownController = new AbortController();
  // Every run in flight listens to this signal: hundreds of listeners are expected, not a leak.
  setMaxListeners(0, shutdownController.signal);
  const untracedWorkerFor = withMemoryContext(
    options.workerFor ??
      defaultWorkerFor({
        config,
        model,
        tools,
        sandbox,
        logger,
        now,
        cooldowns: maskingCooldowns(store.cooldowns, redactor.redactText),
        hooks: defaultTools.hooks,
        redact: redactor.redactText,
        redactCutEnd: (text) => redactor.redactCutEnd(text),
        redactCutStart: (text) => redactor.redactCutStart(text),
      }),
    {
      memories: memory.memories,
      runsBefore: (agent, before, limit) =>
        finishedRunsBefore((filter) => runs.list(filter), agent, before, limit),
      redact: redactor.redactText,
    },
  );
  const workerFor = learningSecretsFirst(
    traced ? tracedWorkerFor(untracedWorkerFor, traced) : untracedWorkerFor,
    secretLearner,
    redactor,
  );
  // Before the run manager: runs recovery ends as crashed are delivered too.
  deliveries.follow({
    get: (id) => store.runs.get(id),
    find: (id) => store.runs.find(id),
    list: (filter) => store.runs.list({ ...filter, limit: filter.limit ?? 20 }),
    isHere: (id) => runs.isHere(id),
  });
  let runCreated: ((record: RunRecord) => void) | undefined;
  const runs: RunManager = new RunManager({
    store: store.runs,
    events: bus,
    agents,
    workerFor: haltingWhileLeaseLapsed(
      store.storage ? haltingWhileStorageFull(workerFor, store.storage) : workerFor,
      store.cluster.lease,
    ),
    ...(store.storage ? { storage: store.storage } : {}),
    concurrency: config.concurrency,
    shutdownSignal: shutdownController.signal,
    redact: redactValue,
    // A keychain may prompt the user: a run's start does not wait for it (its worker does).
    ...(secrets.vault.backend === "keychain" ? {} : { secretsCurrent: () => secretLearner.refresh() }),
    ...(traced ? { traceNewRun: traced.stampNewRun } : {}),
    onRunCreated: (record) => runCreated?.(record),
    runLogs: { hold: (run, agent) => events.holdRun(run, agent), open: (run) => events.openRun(run) },
    checkpoints: maskingCheckpoints(store.checkpoints, redactor),
    runHistory: (run, agent) => events.runEvents(run, 0, agent),
    requeueQueuedRuns: options.requeueQueuedRuns,
    // On a shared store, unfinished runs are other nodes' until their lease says otherwise.
    recover: store.cluster.ownsEveryRun,
    runQueue: options.shareQueue === true ? (life) => store.runQueue(life) : undefined,
    node: store.cluster.node,
    logger: logger.child({ module: "runs" }),
    now,
    clock,
  });
  if (traced) traced.records = (id) => runs.get(id);
  for (const run of runs.recovered) {
    logger.warn({ run: run.id, agent: run.agent }, "run interrupted by a crash marked failed (crashed)");
  }
  // Runs that ended just before a kill -9, their deliveries not decided yet: decided now.
  await deliveries.recover();
  const core: RunCore = {
    bus,
    events,
    approvals,
    questions,
    sandbox,
    // The client itself (its metrics feed), not the tracing wrapper the workers call.
    model: untracedModel,
    secretLearner,
    runs,
    shutdownController,
    deliveries,
    closeTools: () => defaultTools.close(),
    memories: memory.memories,
    whenRunCreated: (listener) => {
      runCreated = listener;
    },
  };
  return core;
}

/** `derive(source())`, derived again only when `source` answers another object. */
function sameWhileUnchanged<Source extends object, Derived>(
  source: () => Source,
  derive: (value: Source) => Derived,
): () => Derived {
  let last: { from: Source; value: Derived } | undefined;
  return () => {
    const from = source();
    if (last?.from !== from) last = { from, value: derive(from) };
    return last.value;
  };
}
