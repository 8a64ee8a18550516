import type { Logger } from "../logging/logger.js";
import { FilesSwitchStore } from "./files-switch-store.js";
import type { SwitchNote } from "./switch-note.js";
import type { SwitchStore } from "./switch-store.js";

export type { SwitchNote } from "./switch-note.js";

export interface FollowSwitchesOptions {
  /** How often a shared store is read to follow the other nodes (default 1 s). */
  refreshMilliseconds?: number;
  logger?: Logger;
}

/**
 * Agents an operator turned off (`agentd disable`, the dashboard's toggle, `POST
 * /agents/:id/disable`), kept beside the agent files rather than in them: the operator's file is
 * never rewritten. A switch only turns an agent off; an agent whose file says `enabled: false`
 * stays off whatever the switch says. Held in memory for every lookup; kept in a SwitchStore: one
 * daemon's file in data_dir, or on a cluster the database, read again every second so that a switch
 * made on any node counts on every node within about a second.
 */
export class AgentSwitches {
  readonly #store: SwitchStore;
  #disabled: Map<string, SwitchNote>;
  readonly #listeners = new Set<() => void>();
  /** Changes one after the other, each written before the next is worked out: none is lost. */
  #writing: Promise<void> = Promise.resolve();
  /** Counts local changes: a read of the store begun before one is not applied over it. */
  #generation = 0;
  #refreshing: Promise<void> | undefined;
  #timer: NodeJS.Timeout | undefined;

  private constructor(store: SwitchStore, disabled: Map<string, SwitchNote>) {
    this.#store = store;
    this.#disabled = disabled;
  }

  /** The switches of `<data_dir>/agent-switches.json` (none yet: every agent on); a corrupt file is an error. */
  static open(dataDirectory: string): AgentSwitches {
    const store = new FilesSwitchStore(dataDirectory);
    return new AgentSwitches(store, store.current());
  }

  /** Reads the store once, then, when other processes write it too, follows it. */
  static async follow(store: SwitchStore, options: FollowSwitchesOptions = {}): Promise<AgentSwitches> {
    const switches = new AgentSwitches(store, await store.load());
    if (store.shared) {
      switches.#timer = setInterval(() => {
        switches.refresh().catch((error: unknown) => {
          options.logger?.debug({ err: error }, "reading the agent switches failed; retrying");
        });
      }, options.refreshMilliseconds ?? 1_000);
      switches.#timer.unref();
    }
    return switches;
  }

  /** Who disabled the agent and when; undefined when no operator did. */
  disabled(agentId: string): SwitchNote | undefined {
    return this.#disabled.get(agentId);
  }

  /**
   * Turns the agent off (with who and when) or back on; resolves once the store has it, and counts
   * at once here. Answers whether anything changed (disabling a disabled agent keeps its first note).
   */
  set(agentId: string, enabled: boolean, note: SwitchNote): Promise<boolean> {
    const done = this.#writing.then(() => this.#apply(agentId, enabled ? undefined : note));
    this.#writing = done.then(
      () => undefined,
      () => undefined,
    );
    return done;
  }

  async #apply(agentId: string, note: SwitchNote | undefined): Promise<boolean> {
    // Before and after: a read begun before the write or while it is out is not applied over it.
    this.#generation += 1;
    const changed = await this.#store.write(agentId, note);
    this.#generation += 1;
    const next = new Map(this.#disabled);
    if (note === undefined) next.delete(agentId);
    // Unchanged: another node turned it off first, and the next refresh brings its note.
    else if (changed || !next.has(agentId)) next.set(agentId, note);
    this.#replace(next);
    return changed;
  }

  /** Reads the store again (one read at a time); calls the listeners when it changed. */
  refresh(): Promise<void> {
    this.#refreshing ??= this.#refreshOnce().finally(() => (this.#refreshing = undefined));
    return this.#refreshing;
  }

  async #refreshOnce(): Promise<void> {
    const generation = this.#generation;
    const disabled = await this.#store.load();
    // A change made here while the read was out may be missing from it: the next read has it.
    if (generation !== this.#generation) return;
    this.#replace(disabled);
  }

  #replace(next: Map<string, SwitchNote>): void {
    if (sameSwitches(this.#disabled, next)) return;
    this.#disabled = next;
    for (const listener of this.#listeners) listener();
  }

  /** Calls `listener` after each change, made here or (on a cluster) on another node; answers the unsubscribe. */
  onChange(listener: () => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  /** Stops following the store and lets go of it. */
  async close(): Promise<void> {
    if (this.#timer) clearInterval(this.#timer);
    await this.#refreshing?.catch(() => undefined);
    await this.#store.close?.();
  }
}

function sameSwitches(left: Map<string, SwitchNote>, right: Map<string, SwitchNote>): boolean {
  if (left.size !== right.size) return false;
  for (const [agent, note] of left) {
    const other = right.get(agent);
    if (other === undefined || other.at !== note.at || other.by !== note.by) return false;
  }
  return true;
}
