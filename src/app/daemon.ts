import { MemoryOperators } from "../memory/memory-operators.js";
import { startApiServer } from "../api/api-server.js";
import { resolveApiToken } from "../api/api-token-file.js";
import type { ApiServices, ApprovalsService } from "../api/api-services.js";
import type { StartingServer } from "../api/starting-server.js";
import { type Clock, systemClock } from "../clock/clock.js";
import type { Config } from "../config/config-schema.js";
import type { AgentDefinition } from "../definitions/agent-definition.js";
import { DefinitionRegistry } from "../definitions/definition-registry.js";
import type { EventStore } from "../events/event-store.js";
import { ModelClient, type ModelProvider } from "../llm/model-client.js";
import type { DataDirectoryLock } from "../locks/data-directory-lock.js";
import type { Logger } from "../logging/logger.js";
import { logRunLifecycle } from "../runs/run-log.js";
import type { RunManager } from "../runs/run-manager.js";
import { RetentionPruner } from "../retention/retention-pruner.js";
import { configuredRetention } from "../config/retention-settings.js";
import { Scheduler } from "../scheduler/scheduler.js";
import type { ToolExecutor } from "../tools/tool-executor.js";
import type { SandboxHost } from "../sandbox/sandbox-host.js";
import { agentSandboxView } from "../sandbox/sandbox-view.js";
import { unsandboxedAgentIds, unsandboxedAgentWarner } from "../sandbox/unsandboxed-warnings.js";
import { warnRootProcessLimit } from "../sandbox/root-limits-warning.js";
import type { Vault } from "../vault/vault.js";
import type { Worker } from "../workers/worker.js";
import type { ClusterMembership, ClusterNodeInfo } from "../store/cluster-membership.js";
import type { DurableStore } from "../store/durable-store.js";
import { takeOverHandlers } from "../runs/takeover/take-over-runs.js";
import { applyControl, clusterRuns } from "./cluster-runs.js";
import { ClusterPending, applyAnswer, clusterApprovals, clusterQuestions } from "./cluster-answers.js";
import { agentLookupFrom } from "./agent-lookup.js";
import { createAgentsView } from "./agents-view.js";
import type { ApiServerStarter, RunningApiServer } from "./api-server-starter.js";
import { drainRuns } from "./daemon-shutdown.js";
import type { DefinitionSource } from "./definition-source.js";
import { type OpenRunCore, openRunCore } from "./run-core.js";
import { spaceFailureOf } from "../util/storage-gate.js";
import { auditedRunStarts, openDaemonAccess } from "./daemon-access.js";
import { createTriggers } from "./daemon-triggers.js";
import { type SwitchedDefinitionSource, withAgentSwitches } from "./switched-definitions.js";
import { openAgentSwitches } from "../store/open-agent-switches.js";

/** Pieces a caller (a test, a benchmark) may swap for its own; everything else is built from config. */
export interface DaemonOverrides {
  logger?: Logger;
  /**
   * The daemon's one time source: the scheduler, run timeouts, approval and question timeouts,
   * long polls, sessions and the cluster lease run on it, and records are stamped by it; default:
   * the system clock.
   */
  clock?: Clock;
  /** Where secrets live; default: the vault config `vault` names. */
  vault?: Vault;
  /** The LLM endpoint; default: the model client for config `llm`. */
  model?: ModelProvider;
  /** Every tool call; default: the built-in and MCP tools behind permissions and approvals. */
  tools?: ToolExecutor;
  /** Which worker runs a definition; default: the LLM worker, or the CLI worker with LLM fallback. */
  workerFor?: (definition: AgentDefinition) => Worker;
  /** The agents and presets; default: the DefinitionRegistry watching the folders. */
  definitions?: DefinitionSource;
  startApiServer?: ApiServerStarter;
  approvals?: ApprovalsService;
}

export interface StartDaemonOptions {
  config: Config;
  /** The config file read, if any: the sandbox hides its folder from agents working elsewhere. */
  configFile?: string | undefined;
  version: string;
  overrides?: DaemonOverrides;
  /**
   * Taken by `agentd start` before this module is even loaded: the data folder's lock and the
   * socket answering `/health` ("starting") while the agents are read. The daemon owns both from
   * here; the API takes the socket over once everything is ready.
   */
  starting?: { lock: DataDirectoryLock; server: StartingServer; startedAt: Date } | undefined;
}

/** A running daemon: every service, the API's URL, and the one way to stop it. */
export interface Daemon {
  readonly url: string;
  /** The data folder's lock, held until shutdown; released by then. */
  readonly lock: DataDirectoryLock;
  /** The API token clients must present; undefined with `server.auth: none`. */
  readonly token: string | undefined;
  /** `<data_dir>/api.token` when the token is the generated one. */
  readonly tokenFile: string | undefined;
  readonly config: Config;
  readonly logger: Logger;
  readonly definitions: DefinitionSource;
  readonly runs: RunManager;
  readonly scheduler: Scheduler;
  readonly events: EventStore;
  /** Where durable state lives (`store.backend`). */
  readonly store: DurableStore;
  /** With the postgres store: this node's id and the cluster's nodes when it started. */
  readonly cluster: { node: string; nodes: ClusterNodeInfo[] } | undefined;
  /** What children are sandboxed with, and whether the sandbox works here. */
  readonly sandbox: SandboxHost;
  /** Prunes history past retention at start and every hour; undefined where the store does not prune. */
  readonly retention: RetentionPruner | undefined;
  /** Stops taking work, drains runs within `shutdown.grace`, closes everything. Idempotent. */
  shutdown(): Promise<void>;
}

function withServerToken(config: Config, token: string | undefined): Config {
  return token === undefined ? config : { ...config, server: { ...config.server, token } };
}

/** How long workers get to return after the shutdown signal before their runs are recorded anyway. */
const STOP_WAIT_MILLISECONDS = 10_000;

/**
 * The composition root of `agentd start`: the run core opened as `agentd run` opens it (run-core.ts:
 * the lock, the secrets, the definitions — here the watching registry —, stores, bus, brokers,
 * tools, workers, run manager with crash recovery), then the scheduler and the API around it.
 */
export async function startDaemon(options: StartDaemonOptions): Promise<Daemon> {
  const { overrides = {}, starting } = options;
  const startedAt = starting?.startedAt ?? new Date((overrides.clock ?? systemClock).now());
  let tokenSource: ReturnType<typeof resolveApiToken>;
  const core = await openRunCore<SwitchedDefinitionSource>({
    config: options.config,
    lock: starting?.lock,
    // Written into the folder only once it is ours; the generated token joins the config before
    // secrets are prepared, so it is masked like server.token.
    prepareConfig: (config) => {
      tokenSource = resolveApiToken(config);
      return withServerToken(config, tokenSource?.token);
    },
    configFile: options.configFile,
    holder: { command: "start" },
    vault: overrides.vault,
    logger: overrides.logger,
    clock: overrides.clock,
    // An operator's enable/disable (data_dir/agent-switches.json, or the cluster's table) is read
    // once the folder is ours.
    // A switches file that cannot be read stops the start (it must not turn disabled agents back
    // on): the registry started here is closed first, or its watcher would keep the process alive
    // after the error was printed, never listening and never exiting.
    loadDefinitions: async ({ config, logger }) => {
      const registry =
        overrides.definitions ??
        (await DefinitionRegistry.start(config, { watch: true, cache: true, logger }));
      try {
        return withAgentSwitches(registry, await openAgentSwitches(config, logger));
      } catch (error) {
        if (overrides.definitions === undefined) await registry.close();
        throw error;
      }
    },
    requeueQueuedRuns: true,
    shareQueue: true,
    ownModelConnections: true,
    model: overrides.model,
    tools: overrides.tools,
    workerFor: overrides.workerFor,
  }).catch(async (error: unknown) => {
    await starting?.server.close();
    throw error;
  });
  try {
    const token = tokenSource === undefined ? undefined : core.config.server.token;
    return await serveDaemon(core, { ...options, startedAt, token, tokenFile: tokenSource?.file });
  } catch (error) {
    await starting?.server.close();
    await core.close();
    throw error;
  }
}

/** Around the run core: cluster membership, the run log, the scheduler and the HTTP API. */
async function serveDaemon(
  core: OpenRunCore<SwitchedDefinitionSource>,
  options: StartDaemonOptions & { startedAt: Date; token: string | undefined; tokenFile: string | undefined },
): Promise<Daemon> {
  const { overrides = {}, startedAt, token } = options;
  const { config, logger, store, lock, definitions } = core;
  const { bus, events, runs, approvals, questions, sandbox, model, secretLearner, shutdownController } = core;
  const runsLogger = logger.child({ module: "runs" });
  // What the other nodes send, and runs changing hands (a cluster of one sends and hands nothing).
  store.cluster.handle({
    control: (message) =>
      message.action === "decide" || message.action === "answer"
        ? applyAnswer(message, { approvals, questions }, runsLogger)
        : applyControl(runs, message, runsLogger),
    ...takeOverHandlers({
      runs,
      agents: agentLookupFrom(() => definitions.snapshot()),
      logger: runsLogger,
      clock: core.clock,
    }),
  });
  const stopRunLog = logRunLifecycle(bus, runs, runsLogger);
  if (runs.requeued.length > 0) {
    logger.info({ runs: runs.requeued.length }, "runs still queued before the restart were queued again");
  }
  // After recovery, with the agents loaded: `resume: true` runs continue from their checkpoints
  // (on a cluster: every such run no node is running, back to the queue for any node to claim).
  for (const run of await runs.resumeInterruptedRuns()) {
    logger.info({ run: run.id, agent: run.agent }, "run interrupted by a crash or shutdown resumed");
  }
  // What recovery changed is on disk (and told) before the API serves the runs.
  await runs.published();
  const access = await openDaemonAccess({
    config,
    logger,
    clock: core.clock,
    node: store.cluster.node,
    token,
    publish: (draft) => bus.publish(draft),
    storage: store.storage,
  });
  // Runs started otherwise than by a request (schedules, triggers, sub-agents) are audited as they are created.
  core.whenRunCreated(auditedRunStarts(access.audit));
  const scheduler = new Scheduler({
    runs,
    events: bus,
    state: store.schedules,
    logger: logger.child({ module: "scheduler" }),
    queueLimit: config.scheduler.queue_limit,
    clock: core.clock,
  });
  const servingDefinitions = () => {
    const snapshot = definitions.snapshot();
    return snapshot.agents.flatMap((status) => snapshot.get(status.id) ?? []);
  };
  const warnUnsandboxed = unsandboxedAgentWarner(logger.child({ module: "sandbox" }));
  warnRootProcessLimit(logger.child({ module: "sandbox" }), config.sandbox.mode);
  scheduler.apply(servingDefinitions());
  warnUnsandboxed(servingDefinitions());
  const triggers = createTriggers(core, logger.child({ module: "triggers" }));
  await triggers.apply(servingDefinitions());
  // Upstream runs that ended just before a kill -9, their followers not started: started now.
  await triggers.recoverRunEnds();
  const stopFollowing = definitions.onChange(() => {
    secretLearner.definitionsChanged(definitions.snapshot());
    scheduler.apply(servingDefinitions());
    warnUnsandboxed(servingDefinitions());
    void triggers.apply(servingDefinitions());
  });

  // History past retention is pruned now and every hour, while the daemon runs.
  const configuredPolicy = configuredRetention(config.retention);
  const retention = store.prune
    ? new RetentionPruner({
        prune: store.prune.bind(store),
        policyOf: (agent) => definitions.snapshot().get(agent)?.retention ?? configuredPolicy,
        clock: core.clock,
        logger: logger.child({ module: "retention" }),
      })
    : undefined;
  retention?.start();

  // The other nodes' approvals and questions too, answered where their run is.
  const clusterPending = new ClusterPending(bus, core.clock);
  const services: ApiServices = {
    agents: createAgentsView({
      directory: config.agents_dir,
      snapshot: () => definitions.snapshot(),
      nextFire: (agentId) => scheduler.nextFire(agentId),
      lastRun: (agentId) => runs.lastRun(agentId),
      sandboxView: (definition) => agentSandboxView(sandbox, definition),
      redact: core.secrets.redactor.redactText,
    }),
    switches: definitions.switches,
    runs: clusterRuns(runs, store.cluster, runsLogger),
    events,
    approvals: overrides.approvals ?? clusterApprovals(approvals, clusterPending, store.cluster),
    questions: clusterQuestions(questions, clusterPending, store.cluster),
    health: {
      version: options.version,
      startedAt,
      store: () => store.health(),
      unsandboxedAgents: () => unsandboxedAgentIds(servingDefinitions()),
      node: store.cluster.node,
    },
    memories: new MemoryOperators({
      memories: core.memories,
      snapshot: () => definitions.snapshot(),
      events: bus,
      redact: core.secrets.redactor.redactText,
      history: events,
    }),
    bus,
    hooks: triggers.intake,
    // Any read token lists them: a filter an agent file wrote, a last error quoting a payload.
    triggers: { list: () => core.secrets.redactor.redactValue(triggers.list()) },
    llm: model instanceof ModelClient ? model.telemetry : undefined,
    traceUrl: config.telemetry.traces?.trace_url,
    ...(store.storage ? { storage: store.storage } : {}),
    ...(access.tokens ? { tokens: access.tokens } : {}),
    audit: access.audit,
    deliveries: core.deliveries.view,
  };
  const stopWorking = async (graceMilliseconds: number) => {
    await drainRuns({
      runs,
      scheduler,
      shutdownController,
      graceMilliseconds,
      stopWaitMilliseconds: STOP_WAIT_MILLISECONDS,
      logger,
    });
    stopFollowing();
    await triggers.close();
    stopRunLog();
    await retention?.stop();
    clusterPending.close();
    await access.close();
  };
  const startServer = overrides.startApiServer ?? startApiServer;
  // The API shows agent files and trigger settings masked with what the redactor knows: the vault
  // is read before it answers (a keychain, which may prompt, is read when a run needs it).
  if (core.secrets.vault.backend !== "keychain") await secretLearner.refresh();
  let server: RunningApiServer;
  try {
    server = await startServer(services, {
      host: config.server.host,
      port: config.server.port,
      token,
      tokens: access.tokens,
      allowedHosts: config.server.allowed_hosts,
      allowedOrigins: config.server.allowed_origins,
      trustProxy: config.server.trust_proxy,
      secureCookies: config.server.secure_cookies,
      logger: logger.child({ module: "api" }),
      clock: core.clock,
      listening: options.starting?.server,
      dataDirectory: config.data_dir,
    });
  } catch (error) {
    // A daemon that cannot listen must not keep scheduling runs nobody can see (the caller closes the core).
    await stopWorking(0);
    throw error;
  }
  try {
    lock.update({ url: server.url });
  } catch (error) {
    // The disk filled up during the start: the daemon serves anyway (the lock file is still held).
    if (!spaceFailureOf(error)) throw error;
    logger.warn({ err: error }, "could not note the daemon's URL in the lock file (the disk is full)");
  }
  core.deliveries.setDashboardUrl(server.url);
  const cluster = await announceNode(store.cluster, server.url, logger);

  let shuttingDown: Promise<void> | undefined;
  const shutdown = async () => {
    await stopWorking(config.shutdown.grace);
    await server.close();
    await core.close();
    logger.info("daemon stopped");
    logger.flush();
  };
  return {
    url: server.url,
    lock,
    token,
    tokenFile: options.tokenFile,
    config,
    logger,
    definitions,
    runs,
    scheduler,
    events,
    store,
    cluster,
    sandbox,
    retention,
    shutdown: () => (shuttingDown ??= shutdown()),
  };
}

/**
 * Publishes this node's URL in the cluster's node list; returns this node and the nodes (none if
 * the query fails), or undefined for a daemon alone on its store.
 */
async function announceNode(
  cluster: ClusterMembership,
  url: string,
  logger: Logger,
): Promise<Daemon["cluster"]> {
  const { node } = cluster;
  if (node === undefined) return undefined;
  try {
    await cluster.announce(url);
    return { node, nodes: await cluster.nodes() };
  } catch (error) {
    logger.warn({ err: error }, "could not list the cluster's nodes");
    return { node, nodes: [] };
  }
}
