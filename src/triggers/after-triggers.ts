import type { EventFeed } from "../events/event-bus.js";
import type { Logger } from "../logging/logger.js";
import type { RunRecord } from "../run-vocabulary/run-record.js";
import type { OwedRunEnds } from "../util/owed-run-ends.js";
import { isTerminal } from "../run-vocabulary/run-status.js";
import { renderTaskTemplate } from "./task-template.js";
import type { TriggerHealth } from "./trigger-health.js";
import type { TriggerRuns } from "./trigger-runs.js";
import type { ArmedTrigger, TriggerSet } from "./trigger-set.js";
import type { AfterTriggerSettings } from "./trigger-schema.js";

/** Runs in one chain of `after` triggers at most: a → b → c … stops there. */
export const MAX_AFTER_CHAIN = 8;

/**
 * `after` triggers: when a run of the agent one follows ends with a listed status, a run of the
 * follower starts, the upstream run's id, status, reason and result in its task. Once per
 * upstream run and trigger (an Idempotency-Key `after:<trigger>:<run>`), so every node of a
 * cluster may see the end and one run starts. A chain never loops: the upstream runs are walked
 * back through their own `after` triggers, and a run is not started when its agent is already in
 * that chain (a → b → a) or the chain holds MAX_AFTER_CHAIN runs; `agentd validate` reports such a
 * cycle before it can be met. Sub-agent runs (called as tools by a parent) start nothing.
 */
export function followRunEnds(options: {
  bus: EventFeed;
  triggers: () => TriggerSet;
  runs: TriggerRuns;
  logger: Logger;
  health: TriggerHealth;
  /** The runs whose followers are not decided yet, kept across a kill -9 (data_dir). */
  owed?: OwedRunEnds | undefined;
}): FollowedRunEnds {
  const { runs, logger, health } = options;
  const start = async (follower: ArmedTrigger<AfterTriggerSettings>, upstream: RunRecord) => {
    const chain = await chainOf(upstream, runs);
    const { definition, name, settings } = follower;
    if (chain.includes(definition.id) || chain.length >= MAX_AFTER_CHAIN) {
      health.record(
        definition.id,
        name,
        "refused",
        chain.includes(definition.id)
          ? `run ${upstream.id} would start a cycle of agents (${chain.join(" ← ")})`
          : `run ${upstream.id} ends a chain of ${MAX_AFTER_CHAIN} runs`,
      );
      logger.warn(
        { agent: definition.id, trigger: name, upstream: upstream.id, chain },
        chain.includes(definition.id)
          ? "an after trigger would start a cycle of agents: not started"
          : `a chain of after triggers reached ${MAX_AFTER_CHAIN} runs: not started`,
      );
      return;
    }
    const task = renderTaskTemplate(settings.task ?? defaultTask(definition.frontmatter.task), (variable) => {
      switch (variable) {
        case "upstream.result":
          return upstream.result ?? upstream.error?.message ?? "";
        case "upstream.id":
          return upstream.id;
        case "upstream.status":
          return upstream.status;
        case "upstream.reason":
          return upstream.reason ?? "";
        case "upstream.agent":
          return upstream.agent;
        case "trigger":
          return name;
        default:
          return undefined;
      }
    });
    const started = await runs.startOnce(
      definition.id,
      task,
      { kind: "after", name, id: upstream.id },
      `after:${name}:${upstream.id}`,
    );
    health.record(definition.id, name, started.duplicate ? "duplicate" : "accepted");
    if (!started.duplicate) {
      logger.info(
        { agent: definition.id, trigger: name, run: started.run.id, upstream: upstream.id },
        "an after trigger started a run",
      );
    }
  };
  /** Upstream runs whose followers are being decided: the live end and a start's recovery decide each once. */
  const deciding = new Map<string, Promise<void>>();
  const decide = (runId: string, status: string): Promise<void> => {
    const already = deciding.get(runId);
    if (already !== undefined) return already;
    const work = (async () => {
      const upstream = runs.get(runId) ?? (await runs.find(runId));
      const matching = options
        .triggers()
        .followersOf(upstream?.agent ?? "")
        .filter((follower) => (follower.settings.after.status as readonly string[]).includes(status));
      if (upstream === undefined) return;
      for (const follower of matching) {
        await start(follower, upstream).catch((error: unknown) => {
          health.record(
            follower.definition.id,
            follower.name,
            "failed",
            error instanceof Error ? error.message : String(error),
          );
          logger.warn(
            { err: error, agent: follower.definition.id, trigger: follower.name, upstream: runId },
            "an after trigger could not start its run",
          );
        });
      }
    })()
      .then(() => options.owed?.done(runId))
      .catch((error: unknown) =>
        logger.warn({ err: error, upstream: runId }, "could not decide after triggers"),
      )
      .finally(() => deciding.delete(runId));
    deciding.set(runId, work);
    return work;
  };
  const unsubscribe = options.bus.subscribe((event) => {
    if (event.type !== "status" || event.run === null) return;
    if (event.data.parent_run !== undefined) return;
    const followers = options.triggers().followersOf(event.agent);
    if (!isTerminal(event.data.status)) {
      // Known owed long before its end is recorded: a kill between the two leaves it owed.
      if (followers.length > 0) options.owed?.owe(event.run);
      return;
    }
    const status = event.data.status;
    const matching = followers.filter((follower) =>
      (follower.settings.after.status as readonly string[]).includes(status),
    );
    if (matching.length === 0) {
      options.owed?.done(event.run);
      return;
    }
    void decide(event.run, status);
  });
  return {
    unsubscribe,
    recover: async (owedRuns) => {
      for (const runId of owedRuns) {
        const upstream = runs.get(runId) ?? (await runs.find(runId));
        if (upstream === undefined) {
          options.owed?.done(runId);
          continue;
        }
        // Not ended (still running, or resumed): its end is decided live.
        if (!isTerminal(upstream.status)) continue;
        if (options.triggers().followersOf(upstream.agent).length === 0) {
          logger.warn(
            { upstream: runId, agent: upstream.agent },
            "a run ended before the restart without its after triggers decided; no agent follows it now: none started",
          );
        }
        await decide(runId, upstream.status);
      }
    },
  };
}

/** Run ends followed for `after` triggers. */
export interface FollowedRunEnds {
  unsubscribe(): void;
  /** Starts the followers of the owed runs that ended (before a kill -9); resolves once recorded. */
  recover(owedRuns: readonly string[]): Promise<void>;
}

/** The agents of the chain that led to `run`, newest first: its own, then its upstream runs'. */
async function chainOf(run: RunRecord, runs: TriggerRuns): Promise<string[]> {
  const agents = [run.agent];
  let current = run;
  while (
    current.trigger.kind === "after" &&
    current.trigger.id !== undefined &&
    agents.length <= MAX_AFTER_CHAIN
  ) {
    const upstreamId = current.trigger.id;
    const upstream = runs.get(upstreamId) ?? (await runs.find(upstreamId));
    if (upstream === undefined) break;
    agents.push(upstream.agent);
    current = upstream;
  }
  return agents;
}

function defaultTask(own: string | undefined): string {
  const line =
    "The run {{upstream.id}} of the agent {{upstream.agent}} ended {{upstream.status}}. Its result:\n\n{{upstream.result}}";
  return own === undefined ? line : `${own}\n\n${line}`;
}
