import type { Config } from "../config/config-schema.js";
import type { RunRecord } from "../run-vocabulary/run-record.js";
import { isTerminal } from "../run-vocabulary/run-status.js";
import { FileMemoryStore } from "./file-memory-store.js";
import { type HandEditNotice, MemoryService } from "./memory-service.js";
import type { MemoryStore } from "./memory-store.js";
import { MemoryTools } from "./memory-tools.js";
import type { StorageGate } from "../util/storage-gate.js";

/** What the composition root needs of memory: the service, its tools, and the runs the prompt shows. */
export interface MemoryParts {
  memories: MemoryService;
  tools: MemoryTools;
}

/** The memory service on the store's memories (PostgreSQL's table) or on files in data_dir. */
export function createMemoryParts(options: {
  config: Config;
  store?: MemoryStore | undefined;
  redact: (text: string) => string;
  /** Where a hand edit of a memory's file is told (files only: a shared store has no hand edits). */
  handEdits?: HandEditNotice | undefined;
  /** The store's room: an agent's write refused for lack of it makes the daemon full and waits. */
  storage?: StorageGate | undefined;
}): MemoryParts {
  const memories = new MemoryService({
    store: options.store ?? new FileMemoryStore(options.config.data_dir),
    redact: options.redact,
    ...(options.store === undefined ? { handEdits: options.handEdits } : {}),
    storage: options.storage,
  });
  return { memories, tools: new MemoryTools(memories) };
}

/**
 * The agent's last `limit` finished runs created before `before` (run ids sort by creation), newest
 * first, from a listing of its newest runs: a few more are asked for, as runs still going are skipped.
 */
export async function finishedRunsBefore(
  list: (filter: { agent: string; limit: number }) => Promise<RunRecord[]>,
  agent: string,
  before: string,
  limit: number,
): Promise<RunRecord[]> {
  const listed = await list({ agent, limit: limit + 8 });
  return listed.filter((run) => run.id < before && isTerminal(run.status)).slice(0, limit);
}
