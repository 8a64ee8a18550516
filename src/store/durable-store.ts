import type { MemoryStore } from "../memory/memory-store.js";
import type { CheckpointRecords } from "../checkpoints/checkpoint-records.js";
import type { EventDraft } from "../events/agent-event.js";
import type { EventHub } from "../events/event-bus.js";
import type { EventLog } from "../events/event-log.js";
import type { PruneReport } from "../retention/retention-pruner.js";
import type { RetentionPolicy } from "../config/retention-policy.js";
import type { RunRecords } from "../runs/run-records.js";
import type { RunQueue } from "../runs/queue/run-queue.js";
import type { RunLife } from "../runs/run-life.js";
import type { ScheduleStates } from "../scheduler/schedule-states.js";
import type { CliCooldownRecords } from "../workers/cli/cli-cooldown-records.js";
import type { ClusterMembership } from "./cluster-membership.js";
import type { SharedDeliveryRows } from "./shared-delivery-rows.js";
import type { SharedTriggerStarts } from "../triggers/shared-trigger-starts.js";
import type { StorageState } from "./storage-state.js";

/** What `GET /health` says about the store. */
export interface StoreHealth {
  backend: "files" | "postgres";
  /** false while the database cannot be reached (writes wait and are retried). */
  connected: boolean;
  /**
   * Writes accepted but not yet in the store: rows waiting for the database, or for files run
   * records, new runs and checkpoints being written off the event loop (each reported only once
   * written; events are appended before they are published and never wait).
   */
  pending_writes: number;
  /** The last error talking to the database, while it lasts. */
  error?: string;
}

/** What the event bus of a store is built with: the vault's redactor and the clock. */
export interface BusOptions {
  redact: (draft: EventDraft) => EventDraft;
  now: () => Date;
}

/**
 * Everything durable behind one interface (config `store.backend`): run records, event logs,
 * schedule state, checkpoints and CLI cooldowns, in files under `data_dir` or in PostgreSQL.
 */
export interface DurableStore {
  readonly backend: "files" | "postgres";
  readonly runs: RunRecords;
  readonly events: EventLog;
  readonly schedules: ScheduleStates;
  readonly checkpoints: CheckpointRecords;
  readonly cooldowns: CliCooldownRecords;
  /** The agents' memories where the store keeps them (PostgreSQL); absent: files in data_dir. */
  readonly memories?: MemoryStore;
  /** The cluster's deliveries (PostgreSQL); absent: `<data_dir>/deliveries.json` of this daemon. */
  readonly deliveries?: SharedDeliveryRows;
  /** Webhook triggers' starts counted across the cluster (PostgreSQL); absent: each daemon counts its own. */
  readonly triggerStarts?: SharedTriggerStarts;
  health(): StoreHealth;
  /** Resolves once every write accepted so far is in the store. */
  committed(): Promise<void>;
  /**
   * Whether the store can write: full after a write failed for lack of space (or quota, or a
   * read-only remount) until a probe finds room again.
   */
  readonly storage?: StorageState;
  /**
   * The event bus this store needs: the in-process bus (files), or with PostgreSQL one whose ids
   * the database gives, so the cluster's events share one sequence per agent.
   */
  createBus(options: BusOptions): EventHub;
  /** The cluster this daemon joined: with files, a cluster of one (single-node-membership.ts). */
  readonly cluster: ClusterMembership;
  /**
   * Where the daemon's runs wait for a slot (RunManagerOptions.runQueue): in this process (files),
   * or the cluster's queue, claimed by any node with a free slot (PostgreSQL).
   */
  runQueue(life: RunLife): RunQueue;
  /**
   * Deletes the history past retention (SPEC 10): finished runs older than their agent's `days` or
   * beyond its newest `runsPerAgent`, with their logs and checkpoints, and agent-log segments all
   * older than `days`. Never an unfinished run. Absent where a store does not prune.
   */
  prune?(policyOf: (agent: string) => RetentionPolicy, now: Date): Promise<PruneReport>;
  /** Starts following the other nodes; called once every listener of the bus is subscribed. */
  start(): Promise<void>;
  /** Waits for accepted writes to land (bounded), then lets go of the store. */
  close(): Promise<void>;
}
