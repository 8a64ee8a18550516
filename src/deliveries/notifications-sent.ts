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

/** What a tree's logs are read up to: when this daemon started, and when the read began. */
export interface CountingTimes {
  /** When this daemon started counting (ms since the epoch). */
  started: number;
  /** When the read began: no `notify` of the tree had run in this daemon before it. */
  now: number;
}

/**
 * The notifications the runs of `root`'s tree sent before this daemon counted them, as their logs
 * tell: each `notify` call that ended ok before the read began (on this node before a restart, or
 * on another node before this one took the run over), and each still under way when the daemon
 * before this one stopped (it may have sent). A run resumed after a restart or a takeover so goes
 * on from what its tree had sent, not from nothing.
 */
export async function notificationsSentBefore(
  root: string,
  times: CountingTimes,
  history: TreeHistory,
): Promise<number> {
  let sent = 0;
  const waiting = [root];
  for (let read = 0; read < RUNS_READ; read++) {
    const run = waiting.shift();
    if (run === undefined) break;
    const record = history.runs.get(run);
    if (record === undefined) continue;
    sent += sentIn(await history.runEvents(run, record.agent), times);
    const children = await history.runs.list({ parent: run, limit: CHILDREN_READ });
    waiting.push(...children.map((child) => child.id));
  }
  return sent;
}

function sentIn(events: readonly AgentEvent[], times: CountingTimes): number {
  const underWay = new Map<string, number>();
  let ended = 0;
  for (const event of events) {
    const time = Date.parse(event.time);
    if (!(time < times.now)) continue;
    if (event.type === "action" && event.data.tool === NOTIFY_TOOL_NAME)
      underWay.set(event.data.call_id, time);
    if (event.type === "observation" && event.data.tool === NOTIFY_TOOL_NAME) {
      if (underWay.delete(event.data.call_id) && event.data.ok) ended += 1;
    }
  }
  // A call of this daemon's own still under way (one of the calls waiting on this read) is not
  // counted here: it counts in memory once the read is done.
  return ended + [...underWay.values()].filter((time) => time < times.started).length;
}
