import type { DeliveriesConfig, DeliveryWhen } from "../config/delivery-settings.js";
import type { AgentDefinition } from "../definitions/agent-definition.js";
import type { AgentEvent } from "../events/agent-event.js";
import type { EventFeed } from "../events/event-bus.js";
import type { Logger } from "../logging/logger.js";
import type { RunRecord } from "../run-vocabulary/run-record.js";
import { isTerminal } from "../run-vocabulary/run-status.js";
import type { RunFilter } from "../runs/run-filter.js";
import type { OwedRun, OwedRunEnds } from "../util/owed-run-ends.js";
import type { DeliveryFacts } from "./delivery-facts.js";
import type { DeliveryService } from "./delivery-service.js";
import { targetsOf } from "./delivery-targets.js";

export interface RunDeliveriesOptions {
  feed: EventFeed;
  service: DeliveryService;
  config: DeliveriesConfig;
  definitionOf: (agent: string) => AgentDefinition | undefined;
  runs: {
    get(runId: string): RunRecord | undefined;
    /** `get` asked of the store: also a run ended before this start. */
    find(runId: string): Promise<RunRecord | undefined>;
    list(filter: RunFilter): Promise<RunRecord[]>;
    /** Whether this node runs it (a cluster's other nodes deliver their own runs). */
    isHere(runId: string): boolean;
  };
  /** The dashboard's base URL, once known (config `deliveries.dashboard_url`, else the daemon's). */
  dashboardUrl: () => string | undefined;
  /** This node, on a cluster: a run's end is delivered by the node that ran it. */
  node?: string | undefined;
  /** The runs whose end deliveries are not decided yet, kept across a kill -9 (data_dir). */
  owed?: OwedRunEnds | undefined;
  logger: Logger;
}

/** The occasions decided at a run's end, in the order a target's `when` is matched. */
const END_OCCASIONS: readonly DeliveryWhen[] = ["always", "failure", "changed"];

/**
 * Turns the bus's events into deliveries: a run's end (`always`, `failure`, `changed`) and a run
 * that waits for an approval or an answer (`waiting`). A sub-agent's run is part of its parent's
 * and delivers nothing of its own. Returns the unsubscribe function.
 */
export function deliverRunOutcomes(options: RunDeliveriesOptions): RunDeliveries {
  const deciding = new Set<Promise<void>>();
  /** Runs whose end is being decided: the live end and a start's recovery decide each once. */
  const endsDeciding = new Set<string>();
  const track = (work: Promise<void>) => {
    const tracked = work
      .catch((error: unknown) => options.logger.error({ err: error }, "could not decide a run's deliveries"))
      .finally(() => deciding.delete(tracked));
    deciding.add(tracked);
  };
  const decideEnd = (runId: string, recovered = false) => {
    if (endsDeciding.has(runId)) return;
    endsDeciding.add(runId);
    track(
      deliverEnd(options, runId, recovered)
        .then(() => options.owed?.done(runId))
        .finally(() => endsDeciding.delete(runId)),
    );
  };
  const unsubscribe = options.feed.subscribe((event) => {
    if (event.run === null) return;
    if (event.type === "status" && isTerminal(event.data.status)) {
      // After the publisher's turn: the run's record is final by then.
      const runId = event.run;
      track(Promise.resolve().then(() => decideEnd(runId)));
    } else if (event.type === "status") {
      // Known owed long before its end is recorded: a kill between the two leaves it owed. Marked
      // with this node's id: at a restart, only the runs this node ran are delivered.
      if (event.data.parent_run === undefined && hasEndTargets(options, event.agent))
        options.owed?.owe(event.run);
    } else if (
      (event.type === "approval" && event.data.state === "requested") ||
      (event.type === "question" && event.data.state === "asked")
    ) {
      track(Promise.resolve(event).then((waiting) => deliverWait(options, waiting)));
    }
  });
  return {
    unsubscribe,
    settled: async () => {
      while (deciding.size > 0) await Promise.all([...deciding]);
    },
    recover: async (owedRuns) => {
      let decided = 0;
      for (const { run: runId, node } of owedRuns) {
        const record = options.runs.get(runId) ?? (await options.runs.find(runId));
        // Gone, or run by another node of the cluster (which delivers it).
        if (
          record === undefined ||
          (record.node !== undefined && node !== undefined && record.node !== node)
        ) {
          options.owed?.done(runId);
          continue;
        }
        // Not ended (still running, or resumed): its end is decided live.
        if (!isTerminal(record.status)) continue;
        if (options.definitionOf(record.agent) === undefined) {
          options.logger.warn(
            { run: runId, agent: record.agent },
            "a run ended before the restart without its deliveries; its agent is gone: none are sent",
          );
        }
        decided += 1;
        decideEnd(runId, true);
      }
      await Promise.all([...deciding]);
      if (decided > 0) {
        options.logger.info(
          { runs: decided },
          "decided the deliveries of runs that ended just before a crash",
        );
      }
    },
  };
}

/** The bus followed for deliveries. */
export interface RunDeliveries {
  unsubscribe(): void;
  /** Resolves once every delivery decided so far is stored. */
  settled(): Promise<void>;
  /** Decides the deliveries of the owed runs that ended (before a kill -9); resolves once stored. */
  recover(owedRuns: readonly OwedRun[]): Promise<void>;
}

/** Whether the agent's definition, as it is now, has targets for a run's end. */
function hasEndTargets(options: RunDeliveriesOptions, agent: string): boolean {
  const definition = options.definitionOf(agent);
  if (definition === undefined) return false;
  return targetsOf(definition.frontmatter.deliver, options.config).some(({ target }) =>
    END_OCCASIONS.some((occasion) => target.when.includes(occasion)),
  );
}

/**
 * Decides and stores a run's end deliveries. `recovered`: a run this data_dir ran before a kill -9
 * (on a cluster under the node id it had then, which `recover` checked).
 */
async function deliverEnd(options: RunDeliveriesOptions, runId: string, recovered: boolean): Promise<void> {
  const record = options.runs.get(runId) ?? (recovered ? await options.runs.find(runId) : undefined);
  if (!record || record.parent_run !== undefined) return;
  const elsewhere = options.node !== undefined && record.node !== undefined && record.node !== options.node;
  if (elsewhere && !recovered) return;
  const definition = options.definitionOf(record.agent);
  if (!definition) return;
  const targets = targetsOf(definition.frontmatter.deliver, options.config);
  if (targets.length === 0) return;
  let changed: boolean | undefined;
  const isChanged = async () => (changed ??= await resultChanged(options, record));
  const facts = endFacts(record, linkOf(options, runId));
  for (const target of targets) {
    // Made before a kill -9 whose run stayed owed: the recovery does not make it twice.
    if (options.service.holdsEndDelivery(runId, target.name, END_OCCASIONS)) continue;
    let when: DeliveryWhen | undefined;
    for (const occasion of END_OCCASIONS) {
      if (!target.target.when.includes(occasion)) continue;
      if (
        occasion === "always" ||
        (occasion === "failure" && record.status === "failed") ||
        (occasion === "changed" && (await isChanged()))
      ) {
        when = occasion;
        break;
      }
    }
    if (when === undefined) continue;
    await options.service.deliver({
      agent: record.agent,
      run: runId,
      when,
      target,
      facts: { ...facts, when },
    });
  }
}

/** Runs of the agent read per page while looking for its previous run. */
const PREVIOUS_RUN_PAGE = 100;
/**
 * Pages read at most: an agent called as a sub-agent thousands of times since its last run of its
 * own has its run counted as changed rather than its whole history read at each run's end.
 */
const PREVIOUS_RUN_PAGES = 20;

/** Whether the run's result differs from the agent's previous run's (a first run counts as changed). */
async function resultChanged(options: RunDeliveriesOptions, record: RunRecord): Promise<boolean> {
  const previous = await previousRun(options, record);
  return previous === undefined || (previous.result ?? "") !== (record.result ?? "");
}

/**
 * The agent's run before this one that ended and was not a sub-agent's, page by page: runs made
 * for a parent's `agent__` calls, or still under way, may stand between the two in any number.
 */
async function previousRun(options: RunDeliveriesOptions, record: RunRecord): Promise<RunRecord | undefined> {
  let before = record.id;
  for (let page = 0; page < PREVIOUS_RUN_PAGES; page++) {
    const earlier = await options.runs.list({ agent: record.agent, before, limit: PREVIOUS_RUN_PAGE });
    const previous = earlier.find((run) => isTerminal(run.status) && run.parent_run === undefined);
    if (previous !== undefined) return previous;
    const last = earlier.at(-1);
    if (last === undefined || earlier.length < PREVIOUS_RUN_PAGE) return undefined;
    before = last.id;
  }
  return undefined;
}

async function deliverWait(
  options: RunDeliveriesOptions,
  event: Extract<AgentEvent, { type: "approval" | "question" }>,
): Promise<void> {
  const runId = event.run;
  if (runId === null || !options.runs.isHere(runId)) return;
  // A sub-agent's wait is its parent's: the run a person started waits on it, and its agent's
  // `waiting` targets are told (the sub-agent's own deliver nothing, as at their end).
  const found = rootRunOf(options, runId);
  const root = { id: found?.id ?? runId, agent: found?.agent ?? event.agent, task: found?.task };
  const definition = options.definitionOf(root.agent);
  if (!definition) return;
  const targets = targetsOf(definition.frontmatter.deliver, options.config).filter(({ target }) =>
    target.when.includes("waiting"),
  );
  const asked =
    event.type === "approval"
      ? `approval of a ${event.data.tool} call`
      : `an answer to "${event.data.question}"`;
  const waitingFor =
    root.id === runId ? asked : `${asked} (asked by its sub-agent ${event.agent}, run ${runId})`;
  for (const target of targets) {
    await options.service.deliver({
      agent: root.agent,
      run: root.id,
      when: "waiting",
      target,
      facts: {
        agent: root.agent,
        run: root.id,
        status: "waiting",
        when: "waiting",
        waiting_for: waitingFor,
        ...(root.task ? { task: root.task } : {}),
        // The run where the approval or the answer is given.
        ...optionalLink(linkOf(options, runId)),
      },
    });
  }
}

/** Parents followed at most, past any nesting limits.max_agent_depth allows. */
const MAX_PARENTS = 64;

/** The run a sub-agent's run belongs to (itself when it has no parent); undefined when not known here. */
function rootRunOf(options: RunDeliveriesOptions, runId: string): RunRecord | undefined {
  let record = options.runs.get(runId);
  for (let parents = 0; record?.parent_run !== undefined && parents < MAX_PARENTS; parents++) {
    record = options.runs.get(record.parent_run);
  }
  return record;
}

/** The facts of an ended run. */
function endFacts(record: RunRecord, link: string | undefined): Omit<DeliveryFacts, "when"> {
  const begin = record.started_at ?? record.created_at;
  return {
    agent: record.agent,
    run: record.id,
    status: record.status,
    ...(record.reason === undefined ? {} : { reason: record.reason }),
    ...(record.ended_at ? { duration_ms: Date.parse(record.ended_at) - Date.parse(begin) } : {}),
    cost_usd: record.cost_usd,
    ...(record.result === undefined ? {} : { result: record.result }),
    ...(record.error === undefined ? {} : { error: record.error.message }),
    task: record.task,
    ...optionalLink(link),
  };
}

/** The run's page in the dashboard. */
export function linkOf(
  options: Pick<RunDeliveriesOptions, "dashboardUrl">,
  runId: string,
): string | undefined {
  const base = options.dashboardUrl();
  return base === undefined ? undefined : `${base.replace(/\/+$/, "")}/#/runs/${encodeURIComponent(runId)}`;
}

function optionalLink(link: string | undefined): { link?: string } {
  return link === undefined ? {} : { link };
}
