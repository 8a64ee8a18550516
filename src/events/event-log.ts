import type { AgentEvent } from "./agent-event.js";
import type { LoadedAgentLog } from "./load-agent-logs.js";

/** One persisted event read back: its id and the exact JSON line it was stored as. */
export interface PersistedLine {
  id: number;
  line: string;
}

/**
 * Where the event store persists events: files in `data_dir` or PostgreSQL. The event store keeps
 * the rings, the ids and the long polls; the log only writes and reads back.
 */
export interface EventLog {
  /**
   * The tail of every agent's log (its last `count` events) and the last id it ever gave; lines
   * longer than `largeLineChars` come as stand-ins (see LineOnDisk), each agent's as it is read.
   */
  load(count: number, largeLineChars?: number): Promise<LoadedAgentLog[]>;
  /**
   * Persists one event before anyone else sees it; throws STORE_WRITE_FAILED. A log whose events
   * were written before they were published (PostgreSQL assigns the ids as it writes) does nothing.
   */
  append(event: AgentEvent, line: string): void;
  /**
   * A new run was recorded and waits in the queue: its log is not created yet (a file creation, up
   * to ~1 ms on a journaling disk, would be paid by the request that created the run); its lines
   * wait in memory, each already in the agent's log, until `openRun` or its end.
   */
  holdRun?(run: string, agent: string): void;
  /** The held run launches: creates its log off the event loop with the lines held. Never rejects. */
  openRun?(run: string): Promise<void>;
  /**
   * Follows `agent`'s events (every agent's when undefined) until the function it resolves with is
   * called: a store shared by a cluster reads in full only the agents followed. Resolves once the
   * agent's latest events are delivered. Absent: every agent is followed always.
   */
  follow?(agent: string | undefined): Promise<() => void>;
  /** Events read from a shared store since start, per agent (absent for the files). */
  eventsRead?(): ReadonlyMap<string, number>;
  /** The run ended: its log may be flushed to the device and closed. */
  runEnded(run: string, agent: string): void;
  /**
   * A run's events with id > after, oldest first, at most `limit` (`agent`: the run's, where a log
   * may look too).
   */
  runEvents(run: string, after: number, agent?: string, limit?: number): Promise<PersistedLine[]>;
  /** An agent's events with id > after, oldest first, at most `limit`. */
  history(agent: string, after: number, limit: number): Promise<PersistedLine[]>;
  close(): void;
}
