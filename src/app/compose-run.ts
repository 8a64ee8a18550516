import type { ApprovalBroker } from "../approvals/approval-broker.js";
import type { Config } from "../config/config-schema.js";
import type { AgentDefinition } from "../definitions/agent-definition.js";
import { createSnapshot, type DefinitionSnapshot } from "../definitions/definition-snapshot.js";
import type { AgentEvent } from "../events/agent-event.js";
import type { EventFeed } from "../events/event-bus.js";
import type { ModelProvider } from "../llm/model-client.js";
import type { Logger } from "../logging/logger.js";
import type { QuestionBroker } from "../questions/question-broker.js";
import type { AgentLookup } from "../runs/agent-availability.js";
import type { RunRecord } from "../run-vocabulary/run-record.js";
import { isTerminal } from "../run-vocabulary/run-status.js";
import type { ToolExecutor } from "../tools/tool-executor.js";
import type { Worker } from "../workers/worker.js";
import { agentLookupFrom } from "./agent-lookup.js";
import { type CoreDefinitions, type OpenRunCore, openRunCore } from "./run-core.js";
import { openAuditRecorder } from "../store/open-access-stores.js";
import { auditedRunStarts } from "./daemon-access.js";
import { localUserName } from "../util/local-user.js";

/** How long sub-agent runs still finishing get once the run ended, before the folder is released. */
const CHILDREN_WAIT_MILLISECONDS = 10_000;

export interface SingleRunOptions {
  config: Config;
  /** The config file read, if any: the sandbox hides its folder from agents working elsewhere. */
  configFile?: string | undefined;
  /** Every agent loaded: the run's own, and the ones its `agents:` may call. Default: this one only. */
  snapshot?: DefinitionSnapshot | undefined;
  definition: AgentDefinition;
  task: string;
  /** Called with every event of the run, in order, once it is stored. */
  onEvent: (event: AgentEvent) => void;
  /** Overrides for tests and for the integrator: the model, the tools, the worker. */
  model?: ModelProvider;
  tools?: ToolExecutor;
  worker?: Worker;
  logger?: Logger;
  /** Where the run's log lines go instead of stderr (a file, so a terminal shows only progress). */
  logDestination?: NodeJS.WritableStream | undefined;
}

/** One run in this process: its id, how to stop it, and its record once it ends. */
export interface SingleRun {
  runId: string;
  /** Stops the run; it ends `stopped` with reason `user_stop`. Nothing once it has ended. */
  stop(): void;
  /** The run record, settled when the run ends and the data folder is released (never rejects). */
  finished: Promise<RunRecord>;
  /** The run's `ask` calls: `onRequested` to prompt a human, `decide` to answer. */
  approvals: ApprovalBroker;
  /** The run's `ask_human` questions: `onAsked` to prompt a human, `answer` to answer. */
  questions: QuestionBroker;
}

/**
 * `agentd run` when no daemon owns the data folder: opens the core the daemon runs on (run-core.ts:
 * the folder's lock — DATA_DIR_LOCKED names the holder otherwise —, the store, the run manager), so
 * the run's record, its events (ids continuing the agent's) and its checkpoints are in `data_dir`,
 * and `agentd runs` and the agent's `last_run` show it. What is left here is the terminal's part:
 * following the run's events, and stopping it. The core closes once the run has ended.
 */
export async function startSingleRun(options: SingleRunOptions): Promise<SingleRun> {
  const { definition, worker } = options;
  const snapshot = options.snapshot ?? snapshotOf(definition);
  const core = await openRunCore({
    config: options.config,
    configFile: options.configFile,
    holder: { command: "run", agent: definition.id },
    logger: options.logger,
    logDestination: options.logDestination,
    loadDefinitions: async () => ({ snapshot: () => snapshot }),
    agents: () => lookupFor(definition, snapshot),
    requeueQueuedRuns: false,
    model: options.model,
    tools: options.tools,
    workerFor: worker === undefined ? undefined : () => worker,
  });
  const { runs } = core;
  // The run and its sub-agents' runs are audited (actor `cli`, the local user) in the store's trail.
  const audit = await openRunAudit(core);
  // Sub-agent runs still finishing get a moment once the run ended, before the folder is released.
  const close = async () => {
    await core.close({ idleMilliseconds: CHILDREN_WAIT_MILLISECONDS });
    await audit.close();
  };
  const follower = followRun(core.bus, options.onEvent);
  let record: RunRecord;
  try {
    record = await runs.start(definition.id, options.task, { kind: "cli" });
  } catch (error) {
    follower.unsubscribe();
    await close();
    throw error;
  }
  const runId = record.id;
  const finished = follower
    .follow(runId, record)
    .then((last) => runs.get(runId) ?? last)
    .finally(close);
  return {
    runId,
    stop: () => {
      // A run that ended meanwhile needs no stop.
      if (!isTerminal(runs.get(runId)?.status ?? "completed")) runs.stop(runId).catch(() => undefined);
    },
    finished,
    approvals: core.approvals,
    questions: core.questions,
  };
}

/**
 * The terminal's view of one run: its events only (a sub-agent's go to that agent's log; the call
 * shows as the parent's action and observation), in order. Subscribed before the run is created,
 * so its first `status` events are kept until its id is known.
 */
function followRun(bus: EventFeed, onEvent: (event: AgentEvent) => void) {
  let runId: string | undefined;
  const early: AgentEvent[] = [];
  let settle: (record: RunRecord | undefined) => void = () => undefined;
  const ended = new Promise<RunRecord | undefined>((resolve) => (settle = resolve));
  const show = (event: AgentEvent) => {
    if (event.run !== runId) return;
    onEvent(event);
    if (event.type === "status" && isTerminal(event.data.status)) settle(undefined);
  };
  const unsubscribe = bus.subscribe((event) => {
    if (runId === undefined) early.push(event);
    else show(event);
  });
  return {
    unsubscribe,
    /** Shows the run's events until its final status; resolves with its record then. */
    follow: async (id: string, created: RunRecord): Promise<RunRecord> => {
      runId = id;
      for (const event of early.splice(0)) show(event);
      await ended;
      unsubscribe();
      return created;
    },
  };
}

/** This agent even when disabled (that only unschedules it); the others, for its sub-agent tools. */
function lookupFor(definition: AgentDefinition, snapshot: DefinitionSnapshot): AgentLookup {
  const others = agentLookupFrom(() => snapshot);
  return (agentId) => (agentId === definition.id ? { state: "ready", definition } : others(agentId));
}

function snapshotOf(definition: AgentDefinition): DefinitionSnapshot {
  const status = {
    id: definition.id,
    file: definition.file,
    valid: true,
    errors: [],
    warnings: [],
    definition,
  };
  return createSnapshot([status], [], new Map([[definition.id, definition]]));
}

/**
 * The audit trail of the data folder's store, told of every run the core creates. A trail that
 * cannot be opened is logged, and the run goes on without it.
 */
async function openRunAudit(core: OpenRunCore<CoreDefinitions>): Promise<{ close(): Promise<void> }> {
  try {
    const { recorder, close } = await openAuditRecorder({
      config: core.config,
      logger: core.logger,
      clock: core.clock,
      publish: (draft) => core.bus.publish(draft),
    });
    const pending = new Set<Promise<void>>();
    const record = auditedRunStarts(recorder, localUserName());
    core.whenRunCreated((run) => {
      const recorded = record(run).finally(() => pending.delete(recorded));
      pending.add(recorded);
    });
    return {
      close: async () => {
        await Promise.all(pending);
        await close();
      },
    };
  } catch (error) {
    core.logger.warn({ err: error }, "could not open the audit trail: the run is not audited");
    return { close: () => Promise.resolve() };
  }
}
