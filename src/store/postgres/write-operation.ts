import type { Checkpoint } from "../../checkpoints/checkpoint.js";
import type { EventDraft } from "../../events/agent-event.js";
import type { RunRecord } from "../../run-vocabulary/run-record.js";
import type { AgentScheduleState } from "../../scheduler/schedule-state.js";
import type { CliCooldown } from "../../workers/cli/cli-cooldown-records.js";

/** An event draft with its time; PostgreSQL gives it its id as it writes it. */
export type TimedDraft = EventDraft & { time: string };

/** One change waiting to be written, in the order the daemon made it. */
export type WriteOperation =
  /** `claimable`: a new run queued for any node to claim (otherwise the run is this node's). */
  | { kind: "run"; record: RunRecord; claimable?: boolean }
  | { kind: "event"; draft: TimedDraft }
  | { kind: "schedule_state"; agent: string; state: AgentScheduleState | undefined }
  | { kind: "checkpoint"; run: string; checkpoint: Checkpoint | undefined }
  | { kind: "cli_cooldown"; cooldown: CliCooldown }
  /** Fire claims accounted for by a report (`skipped`, `missed`) written before in the same order. */
  | { kind: "fires_settled"; agent: string; scheduledFor: string[] }
  /** An action or an answer for the node running a run (`message`: its JSON), read by that node's feed. */
  | { kind: "control"; node: string; message: string };
