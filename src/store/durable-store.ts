import type { CheckpointRecords } from "../checkpoints/checkpoint-records.js";
import type { EventDraft } from "../events/agent-event.js";
import type { EventHub } from "../events/event-bus.js";
import type { EventLog } from "../events/event-log.js";
import type { RetentionPolicy } from "../retention/retention-policy.js";
import type { RunRecords } from "../runs/run-records.js";
import type { SharedRunQueue } from "../runs/shared-run-queue.js";
import type { ScheduleStates } from "../scheduler/schedule-states.js";
import type { CliCooldownRecords } from "../workers/cli/cli-cooldown-records.js";
import type { ClusterMembership } from "./cluster-membership.js";

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

/** What one prune deleted. */
export interface PruneReport {
  /** Runs deleted (record, run log, checkpoint, index line). */
  runs: number;
  /** Agent-log segments deleted. */
  segments: number;
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
  health(): StoreHealth;
  /**
   * Resolves once every write accepted so far is in the store: an answer that reports a change
   * waits for it. Absent where writes are done before they return (files).
   */
  committed?(): Promise<void>;
  /**
   * The event bus this store needs, or undefined for the in-process bus. With PostgreSQL the
   * database gives the ids, so the cluster's events share one sequence per agent.
   */
  createBus?(options: BusOptions): EventHub;
  /** The cluster this daemon joined (PostgreSQL only). */
  readonly cluster?: ClusterMembership;
  /** The cluster's queue: runs posted to any node, claimed by a node with a free slot (PostgreSQL only). */
  readonly queue?: SharedRunQueue;
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
