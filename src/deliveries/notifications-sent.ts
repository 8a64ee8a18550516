import type { AgentEvent } from "../events/agent-event.js";
import type { RunRecord } from "../run-vocabulary/run-record.js";
import type { RunFilter } from "../runs/run-filter.js";
import { NOTIFY_TOOL_NAME } from "./notify-tool.js";

/** Where the runs of a tree and their durable events are read. */
export interface TreeHistory {
  runs: {
    get(runId: string): RunRecord | undefined;
    list(filter: RunFilter): Promise<RunRecord[]>;
  };
  /** The run's events as its log keeps them (they outlive a kill -9 of the daemon). */
  runEvents(run: string, agent: string): Promise<AgentEvent[]>;
}

/** Sub-agent runs read per run, and runs of one tree read at most. */
const CHILDREN_READ = 1_000;
const RUNS_READ = 1_000;

/**
 * The notifications the runs of `root`'s tree sent before `before` (ms since the epoch: when this
 * daemon started counting), as their logs tell: each `notify` call that ended ok, and each one
 * still under way when the daemon that ran it stopped (it may have sent). A run resumed after a
 * restart so goes on from what its tree had sent, not from nothing.
 */
export async function notificationsSentBefore(
  root: string,
  before: number,
  history: TreeHistory,
): Promise<number> {
  let sent = 0;
  const waiting = [root];
  for (let read = 0; read < RUNS_READ; read++) {
    const run = waiting.shift();
    if (run === undefined) break;
    const record = history.runs.get(run);
    if (record === undefined) continue;
    sent += sentIn(await history.runEvents(run, record.agent), before);
    const children = await history.runs.list({ parent: run, limit: CHILDREN_READ });
    waiting.push(...children.map((child) => child.id));
  }
  return sent;
}

function sentIn(events: readonly AgentEvent[], before: number): number {
  const underWay = new Set<string>();
  let ended = 0;
  for (const event of events) {
    if (Date.parse(event.time) >= before) continue;
    if (event.type === "action" && event.data.tool === NOTIFY_TOOL_NAME) underWay.add(event.data.call_id);
    if (event.type === "observation" && event.data.tool === NOTIFY_TOOL_NAME) {
      if (underWay.delete(event.data.call_id) && event.data.ok) ended += 1;
    }
  }
  return ended + underWay.size;
}
