import type { AgentDefinition } from "../../definitions/agent-definition.js";
import type { Checkpoint } from "../../checkpoints/checkpoint.js";
import type { LiveRun } from "../live-runs.js";
import { storeFailure } from "../record/new-run-record.js";
import { resumedMessage, resumedRecord } from "../resume/resume-interrupted.js";
import { NO_CHECKPOINT_HINT, conflict } from "../run-conflict.js";
import type { RunLife } from "../run-life.js";
import type { RunRecord } from "../../run-vocabulary/run-record.js";
import { runnableDefinition } from "../runnable-definition.js";
import type { RunQueue } from "./run-queue.js";
import type { ClaimedRun, SharedRunQueue } from "./shared-run-queue.js";

/**
 * The queue of a node of a cluster (PostgreSQL store, daemon only): a new run is posted to the
 * cluster's queue and run by whichever node claims it (maybe this one); this node claims as many
 * runs as it has free slots, whenever work may be waiting. Overlap and queue limits count the
 * cluster's runs. A run cut off by a crash or a shutdown goes back to the cluster's queue.
 */
export class ClusterRunQueue implements RunQueue {
  readonly #shared: SharedRunQueue;
  readonly #life: RunLife;
  /** A claim on the shared queue in flight, and whether another was asked for meanwhile. */
  #claiming = false;
  #claimAgain = false;
  readonly #stopClaiming: () => void;

  constructor(shared: SharedRunQueue, life: RunLife) {
    this.#shared = shared;
    this.#life = life;
    this.#stopClaiming = shared.onWork(() => this.fill());
  }

  /**
   * Queues a new run for the cluster: the node that claims it runs it (maybe this one). A run
   * another start with the same idempotency key made comes back as it is, nothing queued.
   */
  async add({ record }: LiveRun): Promise<RunRecord> {
    let held: RunRecord;
    try {
      held = await this.#shared.post(record);
    } catch (error) {
      throw storeFailure(record, error);
    }
    if (held.id !== record.id) return held;
    this.#life.recorder.publishStatus(record);
    return record;
  }

  /**
   * Claims from the cluster's queue as many runs as this node has free slots (one claim at a
   * time; asked again meanwhile, it claims again after) and starts them here.
   */
  fill(): void {
    const queue = this.#shared;
    const { live, options } = this.#life;
    if (!this.#life.accepting()) return;
    if (this.#claiming) {
      this.#claimAgain = true;
      return;
    }
    let waitingHere = 0;
    for (const id of live.waiting) if (!live.get(id)?.parentControl) waitingHere += 1;
    const free = options.concurrency - live.inFlight.total - waitingHere;
    if (free <= 0) return;
    this.#claiming = true;
    queue
      .claim(free, (agentId) => {
        const availability = options.agents(agentId);
        return availability?.state === "ready" ? availability.definition.limits.max_concurrent_runs : 0;
      })
      .then(async (claimed) => {
        // Stopping meanwhile: the others run them.
        if (!this.#life.accepting()) return queue.release(claimed.map(({ record }) => record.id));
        for (const run of claimed) this.#startClaimed(run);
        // All slots filled: more may be waiting for the next free one.
        if (claimed.length === free) this.#claimAgain = true;
      })
      .catch((error: unknown) =>
        options.logger.warn({ err: error }, "could not claim runs from the cluster's queue"),
      )
      .finally(() => {
        this.#claiming = false;
        if (this.#claimAgain) {
          this.#claimAgain = false;
          this.fill();
        }
      });
  }

  /**
   * Starts a run this node claimed from the cluster's queue, on this node's definition; a run put
   * back after a crash or a shutdown continues from its checkpoint.
   */
  #startClaimed({ record: claimed, resumeFrom }: ClaimedRun): void {
    const life = this.#life;
    let definition: AgentDefinition;
    try {
      definition = runnableDefinition(life.options.agents, claimed.agent);
    } catch (error) {
      const why = `claimed by a node that cannot run it: ${error instanceof Error ? error.message : String(error)}`;
      life.recorder.endUnstarted(
        claimed,
        { status: "failed", error: { code: "CONFLICT", message: why } },
        why,
      );
      return;
    }
    const live: LiveRun = {
      record: { ...claimed, definition_hash: definition.hash },
      definition,
      workerStatus: "running",
      depth: 0,
      ...(resumeFrom === undefined ? {} : { resumeFrom }),
    };
    life.live.set(live);
    life.launch(live);
  }

  /** On a shared queue, the cluster's runs: overlap counts the agent's runs on every node. */
  unfinishedOf(agentId: string): number {
    return this.#life.options.store.unfinishedOf(agentId).unfinished;
  }

  queuedOf(agentId: string): number {
    return this.#life.options.store.unfinishedOf(agentId).queued;
  }

  depth(): number {
    return this.#life.options.store.queuedCount();
  }

  /**
   * The run goes back to the cluster's queue and continues on whichever node claims it, within
   * the agent's cluster-wide `max_concurrent_runs`; when two nodes try at once (a start, a lease
   * takeover, a POST), one puts it back and the other gets CONFLICT.
   */
  async resumeInterrupted(ended: RunRecord): Promise<RunRecord> {
    const { id } = ended;
    const { record } = resumedRecord(this.#life, ended);
    let checkpoint: Checkpoint | undefined;
    try {
      checkpoint = await this.#shared.requeue(record, ended);
    } catch (error) {
      throw storeFailure(record, error);
    }
    if (!checkpoint) {
      const now = this.#life.options.store.get(id) ?? ended;
      if (now.status !== ended.status || now.ended_at !== ended.ended_at)
        throw conflict(now, "resume", "another node resumed it first");
      throw conflict(ended, "resume", NO_CHECKPOINT_HINT);
    }
    this.#life.recorder.publishStatus(record, resumedMessage(checkpoint), {
      resumed_from_round: checkpoint.round,
    });
    return record;
  }

  resumeEnded(ended: RunRecord): RunRecord {
    throw conflict(ended, "resume", "on a cluster the run goes back to the queue: resumeInterrupted");
  }

  close(): void {
    this.#stopClaiming();
  }
}
