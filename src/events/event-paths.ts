import path from "node:path";
import { AgentdError } from "../errors/agentd-error.js";

/*
 * On-disk layout of the event store, under `data_dir`:
 *
 *   events/<agent>.jsonl        the agent's current log segment: its newest events, one JSON object
 *                               per line, in id order, append-only; the tail rebuilds the ring
 *                               buffer and the next id
 *   events/segments/<agent>/<last id>.jsonl
 *                               the agent's older events: the current segment, renamed here once it
 *                               passed its size (8 MB), named by its last event id (12 digits);
 *                               deleted whole once all its events are older than retention
 *   runs/<run>.events.jsonl     every event of one run (the run's whole log), same format;
 *                               fsync'd when the run reaches a terminal status
 *
 * `runs/<run>.json` (the run record) sits next to the run logs but belongs to the run manager.
 */

const SAFE_NAME = /^[A-Za-z0-9][A-Za-z0-9_.-]*$/;

/** Agent and run ids become file names: refuse anything that could leave the folder. */
function checkFileName(kind: "agent" | "run", name: string): string {
  if (!SAFE_NAME.test(name) || name.includes("..")) {
    throw new AgentdError("BAD_REQUEST", `${kind} id "${name}" cannot be used as a file name`, {
      field: kind,
      hint: "ids use letters, digits, _ . and -",
    });
  }
  return name;
}

export function agentEventsDirectory(dataDirectory: string): string {
  return path.join(dataDirectory, "events");
}

export function runsDirectory(dataDirectory: string): string {
  return path.join(dataDirectory, "runs");
}

/** `<data_dir>/events/<agent>.jsonl` */
export function agentEventsFile(dataDirectory: string, agent: string): string {
  return path.join(agentEventsDirectory(dataDirectory), `${checkFileName("agent", agent)}.jsonl`);
}

/** `<data_dir>/runs/<run>.events.jsonl` */
export function runEventsFile(dataDirectory: string, run: string): string {
  return path.join(runsDirectory(dataDirectory), `${checkFileName("run", run)}.events.jsonl`);
}

/** The agent id of an `events/<agent>.jsonl` file name, or undefined for any other file. */
export function agentOfEventsFile(fileName: string): string | undefined {
  if (!fileName.endsWith(".jsonl")) return undefined;
  const agent = fileName.slice(0, -".jsonl".length);
  return SAFE_NAME.test(agent) ? agent : undefined;
}

/** `<data_dir>/events/segments/<agent>/`: the closed segments of an agent's log. */
export function agentSegmentsDirectory(dataDirectory: string, agent: string): string {
  return path.join(agentEventsDirectory(dataDirectory), "segments", checkFileName("agent", agent));
}

/** `<data_dir>/events/segments/<agent>/<last id>.jsonl`, the id 12 digits wide so names sort by it. */
export function agentSegmentFile(dataDirectory: string, agent: string, lastId: number): string {
  return path.join(agentSegmentsDirectory(dataDirectory, agent), `${String(lastId).padStart(12, "0")}.jsonl`);
}

/** The last event id of a segment file name, or undefined for any other file. */
export function lastIdOfSegmentFile(fileName: string): number | undefined {
  const match = /^(\d{12})\.jsonl$/.exec(fileName);
  return match?.[1] === undefined ? undefined : Number(match[1]);
}
