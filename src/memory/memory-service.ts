import { AgentdError } from "../errors/agentd-error.js";
import type { EventPublisher } from "../events/event-bus.js";
import { KeyMutex } from "./key-mutex.js";
import type { MemoryEdit } from "./memory-edits.js";
import { type MemoryKey, memoryKeyText } from "./memory-key.js";
import { MEMORY_HARD_LIMIT_CHARS } from "./memory-settings.js";
import type { MemoryStore, StoredMemory } from "./memory-store.js";
import { addedSecrets } from "./secret-check.js";
import type { Actor } from "../events/actor.js";
import { type MemoryLineChanges, memoryLineChanges } from "./memory-line-changes.js";
import type { StorageGate } from "../util/storage-gate.js";
import { waitForRoom } from "../util/wait-for-room.js";

/** What changed, as the `memory` event tells it. */
export type MemoryChange =
  | { operation: "add"; text: string }
  | { operation: "replace"; old: string; new: string }
  | { operation: "remove"; text: string }
  | ({ operation: "set"; chars: number } & MemoryLineChanges);

export interface MemoryServiceOptions {
  store: MemoryStore;
  /** Masks the vault's known values in a text (the redactor): a write that adds one is refused. */
  redact: (text: string) => string;
  /**
   * Where a change made by hand on a memory's file is told, once the service sees it (files in
   * data_dir only: on PostgreSQL a change the service did not make is another node's, told there).
   */
  handEdits?: HandEditNotice | undefined;
  /**
   * The store's room: an agent's write refused for lack of it makes the daemon full (GET /health
   * degraded, new runs 507) as an operator's would, and waits for room rather than being lost.
   */
  storage?: StorageGate | undefined;
}

/** Who is told of a hand edit: the agents that use the memory, in their logs. */
export interface HandEditNotice {
  events: EventPublisher;
  agentsOf: (key: MemoryKey) => readonly string[];
}

/** The actor of a change made by hand on a memory's file, noticed by the daemon. */
export const HAND_EDIT_ACTOR: Actor = { kind: "system", name: "file" };

/** Who changes a memory, and where the change is told. */
export interface MemoryWriter {
  /** The agents whose logs get the `memory` event (the agent of the run; a scope's agents for the API). */
  agents: readonly string[];
  run: string | null;
  events: EventPublisher;
  by: "agent" | "operator";
  /** Who the operator is (the API token, the dashboard's session, the CLI), for the history. */
  actor?: Actor | undefined;
}

/** An edit as a memory tool makes it, with the bounds it must keep. */
export interface MemoryToolEdit {
  change: MemoryChange;
  edit: (content: string) => MemoryEdit;
  /** The memory may not grow past this (the agent's `max_chars`). */
  maxChars: number;
}

/**
 * How many times a compare-and-set is tried again when the memory changed under it: a hand edit of
 * the file, or on PostgreSQL another node's write (nodes do not share the in-process queue).
 */
const RETRIES = 50;

/**
 * Every read and write of memories, for the tools and the API. Writes of one memory are serialized
 * in this process (two runs at once lose nothing) and land by compare-and-set on the store (a hand
 * edit or, on PostgreSQL, another node in between is seen, never overwritten). A write that would add
 * a vault secret's value is refused; each change is a `memory` event.
 */
export class MemoryService {
  readonly #options: MemoryServiceOptions;
  readonly #mutex = new KeyMutex();
  /** The last text of each memory this service read or wrote: a different one was edited by hand. */
  readonly #seen = new Map<string, StoredMemory>();

  constructor(options: MemoryServiceOptions) {
    this.#options = options;
  }

  /** The memory now (a hand edit since it was last seen is told first, see `handEdits`). */
  read(key: MemoryKey): Promise<StoredMemory> {
    if (this.#options.handEdits === undefined) return this.#options.store.read(key);
    // In the key's queue, so a write under way is seen as this service's, never as a hand edit.
    return this.#mutex.run(memoryKeyText(key), () => this.#readNoticing(key));
  }

  /**
   * A memory tool's edit: refused (AgentdError TOOL_BAD_ARGUMENTS / TOOL_DENIED) or applied and told.
   * On a full store it waits for room (the run is held meanwhile), until `signal` aborts.
   */
  async edit(
    key: MemoryKey,
    toolEdit: MemoryToolEdit,
    writer: MemoryWriter,
    signal?: AbortSignal,
  ): Promise<StoredMemory & { unchanged: boolean }> {
    return this.#mutex.run(memoryKeyText(key), async () => {
      for (let attempt = 0; ; attempt += 1) {
        const current = await this.#readNoticing(key);
        const edited = toolEdit.edit(current.content);
        if (!edited.ok) throw new AgentdError("TOOL_BAD_ARGUMENTS", edited.message);
        if (edited.unchanged === true) return { ...current, unchanged: true };
        if (edited.content.includes("\u0000"))
          throw new AgentdError("TOOL_BAD_ARGUMENTS", "a memory holds text: no NUL characters");
        if (edited.content.length > toolEdit.maxChars && edited.content.length > current.content.length) {
          throw new AgentdError(
            "TOOL_DENIED",
            `your memory would hold ${edited.content.length} characters, over its bound of ${toolEdit.maxChars}: consolidate it first (memory_replace to merge or shorten entries, memory_remove for what no longer matters), then write again`,
          );
        }
        this.#refuseSecrets(current.content, edited.content, "TOOL_DENIED");
        const written = await this.#replaceWhenRoom(key, edited.content, current.version, signal);
        if (written) {
          this.#seen.set(memoryKeyText(key), written);
          this.#tell(key, toolEdit.change, written, writer);
          return { ...written, unchanged: false };
        }
        if (attempt >= RETRIES) {
          throw new AgentdError("CONFLICT", "the memory keeps changing under this write; try again");
        }
      }
    });
  }

  /** An operator's whole new text: CONFLICT (409) unless the memory is still at `expectedVersion`. */
  async set(
    key: MemoryKey,
    content: string,
    expectedVersion: string,
    writer: MemoryWriter,
  ): Promise<StoredMemory> {
    if (content.length > MEMORY_HARD_LIMIT_CHARS) {
      throw new AgentdError("BAD_REQUEST", `a memory holds at most ${MEMORY_HARD_LIMIT_CHARS} characters`, {
        field: "content",
      });
    }
    if (content.includes("\u0000")) {
      throw new AgentdError("BAD_REQUEST", "a memory holds text: no NUL characters", { field: "content" });
    }
    return this.#mutex.run(memoryKeyText(key), async () => {
      const current = await this.#readNoticing(key);
      const stale = () =>
        new AgentdError("CONFLICT", `the memory changed since version ${expectedVersion}`, {
          field: "version",
          hint: `read it again (its version is now ${current.version}) and apply your edit to that`,
        });
      if (current.version !== expectedVersion) throw stale();
      this.#refuseSecrets(current.content, content, "BAD_REQUEST");
      const written = await this.#options.store.replace(key, content, current.version);
      if (!written) throw stale();
      this.#seen.set(memoryKeyText(key), written);
      const changes = memoryLineChanges(current.content, content);
      this.#tell(key, { operation: "set", chars: content.length, ...changes }, written, writer);
      return written;
    });
  }

  /**
   * The store's compare-and-set; a write refused for lack of room makes the store full (see
   * StorageState) and is tried again once it has room. Any other failure is thrown as it is.
   */
  async #replaceWhenRoom(
    key: MemoryKey,
    content: string,
    expectedVersion: string,
    signal: AbortSignal | undefined,
  ): Promise<StoredMemory | undefined> {
    const { store, storage } = this.#options;
    for (;;) {
      try {
        const written = await store.replace(key, content, expectedVersion);
        storage?.succeeded();
        return written;
      } catch (error) {
        if (!storage?.failed(error, undefined, Buffer.byteLength(content))) throw error;
        await waitForRoom(storage, error, signal);
      }
    }
  }

  /**
   * Reads the memory; when it is not what this service last read or wrote, it was edited by hand on
   * its file (the only other writer of data_dir's memories): told as an operator's `set` by
   * HAND_EDIT_ACTOR, with the lines it added and removed. A hand edit made while the daemon was
   * stopped is seen as the memory's first state, and not told.
   */
  async #readNoticing(key: MemoryKey): Promise<StoredMemory> {
    const current = await this.#options.store.read(key);
    const notice = this.#options.handEdits;
    if (notice === undefined) return current;
    const keyText = memoryKeyText(key);
    const before = this.#seen.get(keyText);
    this.#seen.set(keyText, current);
    if (before !== undefined && before.version !== current.version) {
      const change = { operation: "set" as const, chars: current.content.length };
      const lines = memoryLineChanges(before.content, current.content);
      this.#tell(key, { ...change, ...lines }, current, {
        agents: notice.agentsOf(key),
        run: null,
        events: notice.events,
        by: "operator",
        actor: HAND_EDIT_ACTOR,
      });
    }
    return current;
  }

  #refuseSecrets(before: string, after: string, code: "TOOL_DENIED" | "BAD_REQUEST"): void {
    const names = addedSecrets(before, after, this.#options.redact);
    if (names.length === 0) return;
    throw new AgentdError(
      code,
      `refused: the memory would hold the value of the vault secret ${names.join(", ")}; secrets are never remembered (name the secret instead)`,
      code === "BAD_REQUEST" ? { field: "content" } : {},
    );
  }

  #tell(key: MemoryKey, change: MemoryChange, written: StoredMemory, writer: MemoryWriter): void {
    for (const agent of writer.agents) {
      writer.events.publish({
        agent,
        run: writer.run,
        type: "memory",
        data: {
          memory: memoryKeyText(key),
          ...change,
          by: writer.by,
          ...(writer.actor === undefined ? {} : { actor: writer.actor }),
          version: written.version,
          chars: written.content.length,
        },
      });
    }
  }
}
