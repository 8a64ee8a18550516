import { setTimeout as delay } from "node:timers/promises";
import { z } from "zod";
import type { Config } from "../../config/config-schema.js";
import { AgentdError } from "../../errors/agentd-error.js";
import type { AgentEvent } from "../../events/agent-event.js";
import { DataDirectoryLock, type LockHolder } from "../../locks/data-directory-lock.js";
import type { RunRecord } from "../../run-vocabulary/run-record.js";
import { RunRecordSchema } from "../../runs/run-record-schema.js";
import { isTerminal, RunStatusSchema } from "../../run-vocabulary/run-status.js";
import {
  clientToken,
  DaemonClient,
  localDaemonUrl,
  PollResponseSchema,
  type ServedEvent,
  ServedEventSchema,
} from "../daemon-client.js";
import { startRunOnce } from "../start-run-once.js";

/** How long to wait for a daemon that holds the folder but does not listen yet. */
const LISTEN_WAIT_MILLISECONDS = 30_000;
const FOLLOW_WAIT_SECONDS = 30;
const PAGE_SIZE = 1_000;
/** Events a page of a run's log holds (GET /runs/:run/events allows up to 10,000). */
const RUN_LOG_PAGE = 5_000;

const RunStartedSchema = z.object({ run: z.string() });
const RunEventsSchema = z.object({ events: z.array(ServedEventSchema), next: z.number().int() });

export interface DaemonRunOptions {
  /** The daemon that holds the data folder's lock. */
  holder: LockHolder;
  config: Config;
  environment: NodeJS.ProcessEnv;
  agent: string;
  /** As typed; the daemon picks the agent's default task when there is none. */
  task: string | undefined;
  /** Each event of the run, in order. */
  onEvent: (event: AgentEvent) => void;
  /** Said on stderr, for a person (not with --json). */
  notice: (text: string) => void;
  /** Registers the Ctrl-C handler; returns the function that removes it. */
  onInterrupt: (handler: () => void) => () => void;
}

/**
 * `agentd run` while a daemon owns the data folder: the run is sent to that daemon
 * (`POST /agents/:id/runs`) and followed through its event log, so the folder keeps one writer and
 * event ids stay unique and gap-free. The events and the record are the daemon's; the caller prints
 * them as for a run in this process. The first Ctrl-C stops the run on the daemon. Approvals and
 * questions are not asked on this terminal: `agentd approve`, `agentd answer` or the dashboard
 * answer them.
 */
export async function runOnDaemon(options: DaemonRunOptions): Promise<RunRecord> {
  // A daemon listening on every interface (in a container) records 0.0.0.0: reach it on loopback.
  const url = localDaemonUrl(options.holder.url ?? (await waitForUrl(options.config.data_dir)));
  const client = new DaemonClient({ baseUrl: url, token: clientToken(options.config, options.environment) });
  const agentPath = `/agents/${encodeURIComponent(options.agent)}`;
  // Listening before the run is sent: a Ctrl-C while it is being created stops it once it exists.
  let run: string | undefined;
  let interrupted = false;
  const stopOnDaemon = () => {
    if (run !== undefined) client.post(`/runs/${run}/stop`, undefined, z.unknown()).catch(() => undefined);
  };
  const removeInterrupt = options.onInterrupt(() => {
    removeInterrupt();
    interrupted = true;
    options.notice("stopping the run on the daemon (Ctrl-C again to quit at once)…\n");
    stopOnDaemon();
  });
  try {
    // One key for every attempt: a retry after a lost answer finds the run the first one made.
    const started = await startRunOnce(
      client,
      agentPath,
      options.task === undefined ? {} : { task: options.task },
      RunStartedSchema,
    );
    run = started.run;
    options.notice(
      `the daemon at ${url} (pid ${options.holder.pid}) owns this data folder: run ${run} runs there\n`,
    );
    if (interrupted) stopOnDaemon();
    await follow(client, run, agentPath, options);
    return await client.get(`/runs/${run}`, RunRecordSchema);
  } finally {
    removeInterrupt();
  }
}

/** Shows the run's events until its final status: its whole log so far, then the agent's long poll. */
async function follow(
  client: DaemonClient,
  run: string,
  agentPath: string,
  options: DaemonRunOptions,
): Promise<void> {
  let after = 0;
  // Returns true on the run's final status.
  const show = (event: ServedEvent): boolean => {
    if (event.id <= after) return false;
    after = event.id;
    if (event.run !== run) return false;
    options.onEvent(event as unknown as AgentEvent);
    explainWaiting(event, options.notice);
    const status = RunStatusSchema.safeParse(event.data["status"]);
    return event.type === "status" && status.success && isTerminal(status.data);
  };
  // The run's own log first, a page at a time: a long run's log is never one answer.
  const logAfter = async (from: number): Promise<ServedEvent[]> => {
    const events: ServedEvent[] = [];
    for (let cursor = from; ;) {
      const page = await client.get(
        `/runs/${run}/events?after=${cursor}&limit=${RUN_LOG_PAGE}`,
        RunEventsSchema,
      );
      events.push(...page.events);
      if (page.events.length < RUN_LOG_PAGE) return events;
      cursor = page.next;
    }
  };
  if ((await logAfter(0)).map(show).some(Boolean)) return;
  for (;;) {
    const page = await client.get(
      `${agentPath}/events?after=${after}&limit=${PAGE_SIZE}&wait=${FOLLOW_WAIT_SECONDS}`,
      PollResponseSchema,
    );
    // Events that left the daemon's memory before this poll are still in the run's own log.
    const events = page.missed > 0 ? [...(await logAfter(after)), ...page.events] : page.events;
    if (events.map(show).some(Boolean)) return;
  }
}

/** A person at this terminal cannot answer here: say which command does. */
function explainWaiting(event: ServedEvent, notice: (text: string) => void): void {
  const id = typeof event.data["id"] === "string" ? event.data["id"] : undefined;
  if (id === undefined) return;
  if (event.type === "approval" && event.data["state"] === "requested")
    notice(`  answer with: agentd approve ${id}   (or agentd deny ${id})\n`);
  if (event.type === "question" && event.data["state"] === "asked")
    notice(`  answer with: agentd answer ${id} "…"\n`);
}

async function waitForUrl(dataDirectory: string): Promise<string> {
  const deadline = Date.now() + LISTEN_WAIT_MILLISECONDS;
  while (Date.now() < deadline) {
    const holder = DataDirectoryLock.holderOf(dataDirectory);
    if (holder?.url !== undefined) return holder.url;
    if (holder === undefined) break;
    await delay(100);
  }
  throw new AgentdError("DAEMON_UNREACHABLE", `the daemon that owns ${dataDirectory} is not listening`, {
    hint: "wait for agentd start to finish starting, then run again",
  });
}
