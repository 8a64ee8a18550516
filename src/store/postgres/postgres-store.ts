import { ActorSchema } from "../../events/actor.js";
import type { Clock } from "../../clock/clock.js";
import { OffsetClock } from "../../clock/offset-clock.js";
import pg from "pg";
import { z } from "zod";
import { AgentdError } from "../../errors/agentd-error.js";
import { ClusterRunQueue } from "../../runs/queue/cluster-run-queue.js";
import type { Logger } from "../../logging/logger.js";
import { DEFAULT_RETENTION, type RetentionPolicy } from "../../config/retention-policy.js";
import type { ClusterHandlers, ClusterMembership, RunControlMessage } from "../cluster-membership.js";
import type { EventHub } from "../../events/event-bus.js";
import { isTerminal } from "../../run-vocabulary/run-status.js";
import type { BusOptions, DurableStore } from "../durable-store.js";
import { ChangeFeed } from "./change-feed.js";
import { ClusterNode } from "./cluster-node.js";
import { EventInterest, followsOnWrite } from "./event-interest.js";
import { loadSnapshot } from "./load-snapshot.js";
import { migrate } from "./migrations.js";
import { PostgresCheckpoints } from "./postgres-checkpoints.js";
import { PostgresCliCooldowns } from "./postgres-cli-cooldowns.js";
import { PostgresMemories } from "./postgres-memories.js";
import { PostgresDeliveries } from "./postgres-deliveries.js";
import { PostgresTriggerStarts } from "./postgres-trigger-starts.js";
import { PostgresEventBus } from "./postgres-event-bus.js";
import { PostgresEventLog } from "./postgres-event-log.js";
import { PostgresRetention, type PruneReport } from "./postgres-retention.js";
import { PostgresRunQueue } from "./postgres-run-queue.js";
import { PostgresRunRecords } from "./postgres-run-records.js";
import { PostgresScheduleStates } from "./postgres-schedule-states.js";
import { PostgresWriter } from "./postgres-writer.js";
import type { TimedDraft, WriteOperation } from "./write-operation.js";

export interface PostgresStoreOptions {
  url: string;
  /** config `store.lease`. */
  leaseMilliseconds: number;
  /** config `events.buffer_size`: the events per agent loaded at start. */
  bufferSize: number;
  logger: Logger;
  now?: () => Date;
  /** Renews the cluster lease and sweeps for dead nodes (default: the system clock). */
  clock?: Clock;
  /** Each agent's retention policy (config `retention:` and its agent file); default DEFAULT_RETENTION. */
  retention?: (agentId: string) => RetentionPolicy;
  /** Between two pruning passes (default 15 minutes). */
  retentionIntervalMilliseconds?: number;
}

/** How long `close()` waits for queued changes to reach the database. */
const CLOSE_FLUSH_MILLISECONDS = 10_000;

const RunControlMessageSchema: z.ZodType<RunControlMessage> = z.union([
  z.object({
    node: z.string(),
    run: z.string(),
    action: z.enum(["stop", "pause", "resume"]),
    actor: ActorSchema.optional(),
  }),
  z.object({
    node: z.string(),
    run: z.string(),
    action: z.literal("decide"),
    approval: z.string(),
    decision: z.enum(["approve", "deny"]),
    scope: z.enum(["once", "run"]),
    actor: ActorSchema.optional(),
  }),
  z.object({
    node: z.string(),
    run: z.string(),
    action: z.literal("answer"),
    question: z.string(),
    answer: z.string(),
    actor: ActorSchema.optional(),
  }),
]);

/** The PostgreSQL store, with what only it has: run history read on demand, and pruning on demand. */
export interface PostgresStore extends DurableStore {
  readonly backend: "postgres";
  readonly runs: PostgresRunRecords;
  committed(): Promise<void>;
  createBus(options: BusOptions): EventHub;
  /** A pruning pass now (or the one under way); resolves with what it deleted. */
  pruneHistory(): Promise<PruneReport>;
}

/**
 * Opens the PostgreSQL store: connects, migrates (one node at a time), loads what a node needs of
 * the cluster's runs (not their history: see loadSnapshot), event tails and schedule state from
 * one snapshot, and joins the cluster as a new node; once started, it prunes history by the
 * agents' retention policies (one node of the cluster at a time).
 */
export async function openPostgresStore(options: PostgresStoreOptions): Promise<PostgresStore> {
  const logger = options.logger.child({ module: "store" });
  const now = options.now ?? (() => new Date());
  const timeouts = queryTimeouts(options.leaseMilliseconds);
  const pool = openPool(options, { max: 10, queryTimeout: timeouts.query }, logger);
  // The lease has connections of its own: renewing it never waits behind this node's backlog of
  // writes, feed reads and history reads, which under load would have it taken for dead. Each of
  // its queries gives up within half a lease, so one the network swallowed (a cut that keeps TCP
  // up) does not keep the next renewal from being tried.
  const membershipPool = openPool(options, { max: 2, queryTimeout: timeouts.membership }, logger);
  try {
    await migrate(pool);
  } catch (error) {
    await Promise.all([pool.end(), membershipPool.end()]).catch(() => undefined);
    throw new AgentdError("STORE_UNAVAILABLE", "cannot open the PostgreSQL store (store.url)", {
      field: "store.url",
      hint: "check that PostgreSQL is running, reachable from this machine, and that the user may create tables",
      cause: error,
    });
  }
  const snapshot = await loadSnapshot(pool, options.bufferSize);
  let bus: PostgresEventBus | undefined;
  let handlers: ClusterHandlers | undefined;
  // A daemon's clock set to the database's: the lease runs on the clock it corrects, and each
  // renewal measures the offset again.
  const offsetClock = options.clock instanceof OffsetClock ? options.clock : undefined;
  const node = new ClusterNode({
    pool: membershipPool,
    logger,
    leaseMilliseconds: options.leaseMilliseconds,
    ...(options.clock ? { clock: offsetClock?.base ?? options.clock } : {}),
    ...(offsetClock ? { onClockSample: offsetClock.measured.bind(offsetClock) } : {}),
    onDeadNodeRuns: (deadNode, runs) => handlers?.deadNodeRuns(deadNode, runs),
    onLeaseLost: () => {
      handlers?.runsLost("all", "this node's lease expired: another node took its runs over");
      writer.fence();
    },
  });
  const runNodes = snapshot.runNodes;
  // A node reads in full only the agents it writes events of and those its clients follow.
  const interest = new EventInterest();
  const eventsRead = new Map<string, number>();
  const feed = new ChangeFeed({
    url: options.url,
    pool,
    node: node.id,
    logger,
    snapshot: snapshot.snapshot,
    eventCursors: new Map(snapshot.logs.map((log) => [log.agent, log.lastId])),
    onRun: (record, writer, change) => runs.applyRemote(record, writer, change),
    // A run's ending record is served from its ending status event on: both before its listeners.
    onEvent: (event) => {
      if (event.type === "status" && event.run !== null) runs.endTold(event.run, event.data.status);
      bus?.deliver(event);
    },
    interest,
    bufferSize: options.bufferSize,
    onNotable: (event) => {
      if (event.type === "status" && event.run !== null) runs.endTold(event.run, event.data.status);
      bus?.deliverNotable(event);
    },
    onEventsRead: (agent, count) => eventsRead.set(agent, (eventsRead.get(agent) ?? 0) + count),
    onCooldown: (cooldown) => cooldowns.applyRemote(cooldown),
    onControl: (payload) => {
      const parsed = RunControlMessageSchema.safeParse(parseJson(payload));
      if (parsed.success && parsed.data.node === node.id) handlers?.control(parsed.data);
    },
    onQueue: () => queue.wake(),
    onConnection: (error) => writer.reachable(error),
  });
  const writer = new PostgresWriter({
    pool,
    node: node.id,
    logger,
    leaseHeld: () => node.lease.held(),
    onSettled: (batch, change, refused, stale) => {
      runs.settled(batch, change, refused, stale);
      // This node's own events come back through the feed too: it reads the agents it wrote to,
      // and follows them in full for a while.
      if (change !== undefined) {
        interest.touch(agentsOf(batch, followsOnWrite));
        feed.read(agentsOf(batch));
      }
      // Ending status events: read back (and the ending records with them) by the next read; one
      // dropped, or a read that failed, serves its record anyway.
      const ends = endingStatuses(batch);
      if (ends.length > 0) {
        const told = () => ends.forEach(({ run, status }) => runs.endTold(run, status));
        if (change === undefined) told();
        else void feed.readNow(new Set(ends.map(({ agent }) => agent))).then(told);
      }
      if (refused.length === 0) return;
      const lost = refused.map(({ record }) => record.id);
      logger.warn(
        { runs: lost, holders: [...new Set(refused.map(({ node: holder }) => holder))] },
        "another node holds these runs now: this node's changes to them were refused and it stops them",
      );
      handlers?.runsLost(lost, "another node holds the run now");
    },
  });
  // A renewal that succeeded reached the database: the writer, with nothing left to write (its
  // changes of runs let go were dropped), learns it is reachable again.
  node.lease.onChange((held) => {
    writer.leaseChanged(held);
    if (held) writer.reachable(undefined);
  });
  const runs = new PostgresRunRecords({ writer, pool, node: node.id }, snapshot.runs, runNodes);
  const queue = new PostgresRunQueue({
    pool,
    runs,
    node: node.id,
    logger,
    committed: () => writer.committed(),
  });
  const checkpoints = new PostgresCheckpoints({ writer, now }, snapshot.checkpoints);
  const cooldowns = new PostgresCliCooldowns({ writer, now }, snapshot.cooldowns);
  const retention = new PostgresRetention({
    pool,
    logger,
    policyOf: options.retention ?? (() => DEFAULT_RETENTION),
    ...(options.clock ? { clock: options.clock } : {}),
    ...(options.retentionIntervalMilliseconds === undefined
      ? {}
      : { intervalMilliseconds: options.retentionIntervalMilliseconds }),
    onPruned: (pruned) => {
      runs.forget(pruned);
      checkpoints.forget(pruned);
    },
  });
  const cluster: ClusterMembership = {
    node: node.id,
    nodes: () => node.nodes(),
    announce: (url) => node.announce(url),
    ownsEveryRun: false,
    lease: node.lease,
    nodeOf: (run) => runs.nodeOf(run),
    withdraw: (run) => queue.withdraw(run),
    synced: () => writer.committed(),
    sendControl: (message: RunControlMessage) =>
      writer.write({ kind: "control", node: message.node, message: JSON.stringify(message) }),
    handle: (given) => {
      handlers = given;
    },
  };
  return {
    backend: "postgres",
    runs,
    events: new PostgresEventLog(pool, snapshot.logs, {
      follow: async (agent) => {
        const followed = agent === undefined ? interest.followsAll() : interest.follows(agent);
        const release = interest.hold(agent);
        // An agent not followed until now: its latest events are read before the caller serves them.
        if (!followed) await feed.readNow(agent === undefined ? undefined : [agent]);
        return release;
      },
      eventsRead: () => eventsRead,
    }),
    schedules: new PostgresScheduleStates({ writer, pool, node: node.id, logger }, snapshot.states),
    checkpoints,
    cooldowns,
    memories: new PostgresMemories(pool),
    deliveries: new PostgresDeliveries(pool, node.id),
    triggerStarts: new PostgresTriggerStarts(pool),
    cluster,
    runQueue: (life) => new ClusterRunQueue(queue, life),
    createBus: (busOptions) => {
      bus = new PostgresEventBus({
        writer,
        ...busOptions,
        // A run's ending record waits for its ending status event, published right after it.
        onPublish: (draft) => {
          if (draft.type === "status" && typeof draft.run === "string" && isTerminal(draft.data.status))
            runs.endPublished(draft.run, draft.data.status);
        },
      });
      return bus;
    },
    committed: () => writer.committed(),
    health: () => ({
      backend: "postgres",
      connected: writer.connected,
      pending_writes: writer.pending,
      lease_held: node.lease.held(),
      ...(writer.lastError === undefined ? {} : { error: writer.lastError }),
    }),
    start: async () => {
      await node.join();
      await feed.start();
      retention.start();
    },
    pruneHistory: () => retention.prune(),
    close: async () => {
      await retention.close();
      queue.close();
      await writer.flushed(CLOSE_FLUSH_MILLISECONDS);
      writer.close();
      await feed.close();
      await node.leave();
      await Promise.all([pool.end(), membershipPool.end()]).catch(() => undefined);
    },
  };
}

/** The shortest wait for one query of the writer, the feed and the API, whatever the lease. */
const SHORTEST_QUERY_TIMEOUT_MILLISECONDS = 30_000;
/** The shortest wait for one renewal of the lease (its query or its connection). */
const SHORTEST_MEMBERSHIP_TIMEOUT_MILLISECONDS = 100;

/**
 * How long a query may go unanswered before it fails as a lost connection (its connection is then
 * dropped): twice the lease for the writer, the feed and the API (no statement of theirs takes that
 * long on a healthy database), half a lease for the lease's own queries.
 */
export function queryTimeouts(leaseMilliseconds: number): { query: number; membership: number } {
  return {
    query: Math.max(SHORTEST_QUERY_TIMEOUT_MILLISECONDS, 2 * leaseMilliseconds),
    membership: Math.max(SHORTEST_MEMBERSHIP_TIMEOUT_MILLISECONDS, Math.floor(leaseMilliseconds / 2)),
  };
}

/**
 * A pool of at most `max` connections, whose lost connections are logged, never thrown; a
 * connection or a query that gets no answer within `queryTimeout` fails (keepalive alone cannot
 * see a cut that keeps TCP up).
 */
function openPool(
  options: PostgresStoreOptions,
  { max, queryTimeout }: { max: number; queryTimeout: number },
  logger: Logger,
): pg.Pool {
  const pool = new pg.Pool({
    connectionString: options.url,
    max,
    query_timeout: queryTimeout,
    connectionTimeoutMillis: queryTimeout,
    keepAlive: true,
    // A node frozen in the middle of a transaction (a stopped VM, a long pause) would hold its
    // runs' and agents' row locks, and other writers of them with it: past its lease it is dead anyway.
    idle_in_transaction_session_timeout: options.leaseMilliseconds,
  });
  // An idle client losing its connection must not crash the daemon: the writer retries.
  pool.on("error", (error) => logger.warn({ err: error }, "a PostgreSQL connection was lost"));
  // A connection cut while checked out between two queries (the server stopping) emits on the
  // client, where nothing else listens: without this the daemon would crash. The next query fails.
  pool.on("connect", (client) =>
    client.on("error", (error) => logger.debug({ err: error }, "a PostgreSQL connection in use was lost")),
  );
  return pool;
}

/** The agents of the batch's events (of those `which` keeps). */
function agentsOf(batch: WriteOperation[], which: (event: TimedDraft) => boolean = () => true): Set<string> {
  const agents = new Set<string>();
  for (const operation of batch)
    if (operation.kind === "event" && which(operation.draft)) agents.add(operation.draft.agent);
  return agents;
}

/** The ending status events of the batch: each run's, with its agent. */
function endingStatuses(batch: WriteOperation[]): Array<{ agent: string; run: string; status: string }> {
  const ends: Array<{ agent: string; run: string; status: string }> = [];
  for (const operation of batch) {
    if (operation.kind !== "event") continue;
    const { draft } = operation;
    if (draft.type === "status" && typeof draft.run === "string" && isTerminal(draft.data.status))
      ends.push({ agent: draft.agent, run: draft.run, status: draft.data.status });
  }
  return ends;
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}
