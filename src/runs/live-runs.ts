import type { AgentDefinition } from "../definitions/agent-definition.js";
import type { Checkpoint } from "../checkpoints/checkpoint.js";
import { InFlightCounts } from "./in-flight-counts.js";
import type { RunControl } from "../run-vocabulary/run-control.js";
import type { RunRecord } from "../run-vocabulary/run-record.js";

/** A run not finished yet: queued, or in flight with its control. */
export interface LiveRun {
  record: RunRecord;
  definition: AgentDefinition;
  control?: RunControl;
  /** What the worker last reported; a paused run returns to it on resume. */
  workerStatus: "running" | "waiting";
  /** 0 for a run started by a user or a schedule; a sub-agent's run is its parent's depth + 1. */
  depth: number;
  /** A sub-agent's run: its parent's control, whose stop stops it and whose time bounds it. */
  parentControl?: RunControl;
  /** Called with the final record (a parent waiting for its sub-agent). */
  onEnd?: (record: RunRecord) => void;
  /** A resumed run: the checkpoint it continues from. */
  resumeFrom?: Checkpoint;
}

/**
 * The runs this node holds and has not finished: by id, the ones waiting here for a slot (oldest
 * first), and the counts of those in flight, daemon-wide and per agent.
 */
export class LiveRuns {
  readonly #runs = new Map<string, LiveRun>();
  /** Ids of the runs waiting here for a slot, oldest first. */
  readonly waiting: string[] = [];
  readonly inFlight = new InFlightCounts();

  get size(): number {
    return this.#runs.size;
  }

  get(id: string): LiveRun | undefined {
    return this.#runs.get(id);
  }

  has(id: string): boolean {
    return this.#runs.has(id);
  }

  set(run: LiveRun): void {
    this.#runs.set(run.record.id, run);
  }

  delete(id: string): void {
    this.#runs.delete(id);
  }

  ids(): string[] {
    return [...this.#runs.keys()];
  }

  values(): IterableIterator<LiveRun> {
    return this.#runs.values();
  }

  /** Puts a run at the end of the runs waiting for a slot here. */
  enqueue(id: string): void {
    this.waiting.push(id);
  }

  dequeue(id: string): void {
    const index = this.waiting.indexOf(id);
    if (index >= 0) this.waiting.splice(index, 1);
  }

  /** The sub-agent runs of a run that are not finished. */
  childrenOf(id: string): LiveRun[] {
    return [...this.#runs.values()].filter((run) => run.record.parent_run === id);
  }

  /** The sub-agent runs of a run, theirs, and so on. */
  descendantsOf(id: string): string[] {
    return this.childrenOf(id).flatMap((child) => [child.record.id, ...this.descendantsOf(child.record.id)]);
  }
}
