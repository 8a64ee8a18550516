import { closeSync, constants, lstatSync, mkdirSync, open, openSync, renameSync, statSync } from "node:fs";
import { promisify } from "node:util";
import { AgentdError } from "../errors/agentd-error.js";
import type { Logger } from "../logging/logger.js";
import { flushToDeviceLater } from "../util/flush-to-device.js";
import type { SpareFiles } from "../util/spare-files.js";
import { spaceFailureOf } from "../util/storage-gate.js";
import { storeWriteFailed } from "../util/whole-append.js";
import type { AgentEvent } from "./agent-event.js";
import type { EventLog, PersistedLine } from "./event-log.js";
import { DEFAULT_LARGE_LINE_CHARS } from "./event-ring.js";
import { agentEventsDirectory, agentEventsFile, runEventsFile, runsDirectory } from "./event-paths.js";
import { errorReason, inspectLogFile, LOG_APPEND_FLAGS, moveAsideDamaged } from "./damaged-log-file.js";
import {
  addSegmentTails,
  agentLogSegments,
  closeAgentSegment,
  DEFAULT_AGENT_SEGMENT_BYTES,
  pruneAgentSegments,
} from "./agent-log-segments.js";
import { assignSequences, type LoadedAgentLog, loadAgentLogs, type RunToCheck } from "./load-agent-logs.js";
import { repairTornTail } from "./log-tail.js";
import { OpenLogFiles } from "./open-log-files.js";
import { readEventLog } from "./read-event-log.js";
import { readRunLinesOfAgentLog, runLinesOfAgentLog } from "./run-lines-of-agent-log.js";

const openForAppend = promisify(open);

/** A queued run whose log is not created yet: its lines wait here, in order. */
interface HeldRunLog {
  agent: string;
  lines: PersistedLine[];
  /** The log's creation, once asked for (the run launches or ends). */
  creating?: Promise<void>;
  /** The run ended while held: its log is flushed and closed once written. */
  ended: boolean;
}

/**
 * The events as JSONL files in `data_dir`: `events/<agent>.jsonl` and `runs/<run>.events.jsonl`,
 * appended synchronously (safe from kill -9 once `append` returns) and flushed to the device in the
 * background when a run ends. See event-paths.ts for the layout.
 *
 * A new run's log is not created while the run waits in the queue (`holdRun`): creating a file costs
 * up to a millisecond on a journaling disk while other files are being flushed, and a burst of 200
 * new runs would spend that 200 times before their answers. Its lines (the `queued` event, a stop)
 * wait in memory and are served from there; each is already in its agent's log, which is what makes
 * it durable. When the run launches (`openRun`, before its `running` event) or ends, its log is a
 * spare empty file made ahead (`spareRunLogs`) renamed into place on the event loop, else a file
 * created off the event loop, and the held lines go into it in one write. A log that a crash left
 * missing is rebuilt from the agent's log before the run's next line, and read from there meanwhile.
 *
 * An event lands whole in both its logs or in neither: an append the disk cut short is cut back,
 * and when the run log's append fails the agent log's line is taken back too, before
 * STORE_WRITE_FAILED is thrown (its `cause` the file system's error). The start repairs what a
 * crash or a full disk left (see loadAgentLogs); a folder or other non-regular file where a log
 * should be is moved aside, or, when it cannot be, named in an error and never written to.
 */
export class FileEventLog implements EventLog {
  readonly #dataDirectory: string;
  readonly #logger: Logger;
  /** Run logs checked for a torn last line (or a crash-cut log rebuilt) in this process. */
  readonly #checkedRunLogs = new Set<string>();
  /** The last agent and run whose log paths were worked out, and those paths: most events are theirs. */
  #lastAgent: { agent: string; file: string } | undefined;
  #lastRun: { run: string; file: string } | undefined;
  readonly #files = new OpenLogFiles();
  readonly #held = new Map<string, HeldRunLog>();
  /** Agent logs read by run for the rebuilds of one turn of the event loop (a restart's recovery). */
  readonly #rebuildSources = new Map<string, Map<string, string[]>>();
  /** Log paths holding something that could be neither used nor moved aside: never written. */
  readonly #blocked = new Set<string>();
  readonly #runsToCheck: () => RunToCheck[];
  readonly #spareRunLogs: SpareFiles | undefined;

  readonly #segmentBytes: number;
  /** Size of each agent's current log segment, once appended to in this process. */
  readonly #agentBytes = new Map<string, number>();

  constructor(options: {
    dataDirectory: string;
    logger: Logger;
    /** Runs whose logs may hold ids their agent's log lost: the unfinished ones, each agent's newest. */
    runsToCheck?: () => RunToCheck[];
    /** Size past which an agent's log segment is closed (default DEFAULT_AGENT_SEGMENT_BYTES). */
    segmentBytes?: number;
    /**
     * Empty files made ahead, on the file system of `runs/`: a launch renames one into place as the
     * run's log (a rename and an open of a file that exists, tens of microseconds on the event loop)
     * instead of waiting for a file's creation on libuv's threads, behind the other launches' writes.
     */
    spareRunLogs?: SpareFiles;
  }) {
    this.#dataDirectory = options.dataDirectory;
    this.#logger = options.logger;
    this.#runsToCheck = options.runsToCheck ?? (() => []);
    this.#segmentBytes = options.segmentBytes ?? DEFAULT_AGENT_SEGMENT_BYTES;
    this.#spareRunLogs = options.spareRunLogs;
  }

  load(count: number, largeLineChars = DEFAULT_LARGE_LINE_CHARS): Promise<LoadedAgentLog[]> {
    for (const folder of [agentEventsDirectory(this.#dataDirectory), runsDirectory(this.#dataDirectory)]) {
      // A file where the folder should be: moved aside like a damaged log (mkdir would throw EEXIST).
      const found = statSync(folder, { throwIfNoEntry: false });
      if (found && !found.isDirectory()) {
        const restored =
          folder === runsDirectory(this.#dataDirectory)
            ? ""
            : " (the agents' events come back from their run logs)";
        moveAsideDamaged(
          folder,
          "not a folder",
          this.#logger,
          `an empty folder starts in its place${restored}`,
        );
      }
      mkdirSync(folder, { recursive: true });
    }
    const logs = loadAgentLogs({
      dataDirectory: this.#dataDirectory,
      count,
      largeLineChars,
      logger: this.#logger,
      runsToCheck: this.#runsToCheck(),
      append: (file, text) => this.#files.append(file, text),
      blocked: this.#blocked,
    });
    // Logs repaired at the start are not kept open: each opens again at its next line.
    this.#files.closeAll();
    this.#spareRunLogs?.prepare();
    // A current segment just closed holds few events: the closed one has the rest of the tail.
    if (addSegmentTails(this.#dataDirectory, logs, count, this.#logger, largeLineChars))
      assignSequences(logs);
    return Promise.resolve(logs);
  }

  /** Deletes closed agent-log segments older than their agent's retention `days`; returns how many. */
  pruneSegments(daysOf: (agent: string) => number | null, now: Date): number {
    return pruneAgentSegments(this.#dataDirectory, daysOf, now);
  }

  append(event: AgentEvent, line: string): void {
    const agentFile = this.#agentFile(event.agent);
    try {
      this.#checkNotBlocked(agentFile);
      // Encoded once for both logs.
      const data = Buffer.from(`${line}\n`);
      const appended = this.#files.append(agentFile, data);
      if (event.run !== null) {
        const held = this.#held.get(event.run);
        if (held) held.lines.push({ id: event.id, line });
        else {
          try {
            this.#appendToRunLog(event.run, event.agent, line, data);
          } catch (error) {
            // Whole in both logs or in neither: the agent log's line is taken back.
            this.#files.cutBack(agentFile, appended);
            throw error;
          }
        }
      }
      // Counted once the event is whole in both logs: a segment closes only after a whole event.
      this.#grew(event.agent, agentFile, event.id, appended);
    } catch (error) {
      // A full disk is a state, logged once by the store's StorageState: the event waits for room.
      if (!spaceFailureOf(error)) {
        this.#logger.error({ err: error, agent: event.agent, id: event.id }, "could not persist an event");
      }
      if (AgentdError.is(error)) throw error;
      throw storeWriteFailed(agentFile, error, `could not write event ${event.id} of ${event.agent}`);
    }
  }

  holdRun(run: string, agent: string): void {
    if (!this.#held.has(run)) this.#held.set(run, { agent, lines: [], ended: false });
  }

  openRun(run: string): Promise<void> {
    const held = this.#held.get(run);
    if (!held) return Promise.resolve();
    if (held.creating) return held.creating;
    const file = runEventsFile(this.#dataDirectory, run);
    const spare = this.#takeSpare(file);
    if (spare !== undefined) {
      this.#created(run, held, file, spare);
      held.creating = Promise.resolve();
    } else held.creating = this.#create(run, held, file);
    return held.creating;
  }

  /**
   * The run's log made from a spare empty file, renamed into place: its descriptor, or undefined
   * when no spare is ready, a file is already there, or the rename fails (another file system).
   */
  #takeSpare(file: string): number | undefined {
    if (this.#spareRunLogs === undefined || this.#spareRunLogs.ready === 0) return undefined;
    try {
      // Never renamed over a file already there (the log is appended to, as without spares).
      if (lstatSync(file, { throwIfNoEntry: false }) !== undefined) return undefined;
    } catch {
      return undefined;
    }
    const spare = this.#spareRunLogs.take();
    if (spare === undefined) return undefined;
    let descriptor: number | undefined;
    try {
      // Emptied in case a crash left it written.
      descriptor = openSync(spare, LOG_APPEND_FLAGS | constants.O_TRUNC, 0o600);
      renameSync(spare, file);
      return descriptor;
    } catch (error) {
      if (descriptor !== undefined) closeSync(descriptor);
      this.#logger.debug({ err: error, file, spare }, "could not use a spare file as a run log");
      return undefined;
    }
  }

  /** Creates a held run's log off the event loop and writes its lines in one write. Never rejects. */
  async #create(run: string, held: HeldRunLog, file: string): Promise<void> {
    let descriptor: number | undefined;
    try {
      // A plain descriptor (not a FileHandle): OpenLogFiles writes and closes it synchronously.
      descriptor = await openForAppend(file, LOG_APPEND_FLAGS, 0o600);
    } catch (error) {
      this.#logger.debug(
        { err: error, file },
        "could not create a run log ahead; it is made on the event loop",
      );
    }
    this.#created(run, held, file, descriptor);
  }

  /** The held run's log is there (`descriptor`, else opened at its first write): its lines go in. */
  #created(run: string, held: HeldRunLog, file: string, descriptor: number | undefined): void {
    // Written meanwhile by close(): nothing is left to do.
    if (this.#held.get(run) !== held) {
      if (descriptor !== undefined) closeSync(descriptor);
      return;
    }
    this.#held.delete(run);
    try {
      if (descriptor !== undefined) this.#files.adopt(file, descriptor);
      if (held.lines.length > 0) this.#files.append(file, joinLines(held.lines));
      this.#checkedRunLogs.add(run);
    } catch (error) {
      // Not marked checked: the run's next line writes the log from the agent's log first.
      this.#logger.error(
        { err: error, file },
        "could not write a run log (its events are in the agent's log)",
      );
    }
    if (held.ended) this.#ended(run, held.agent);
  }

  /**
   * Flushes the run's log and its agent's log to the device in the background. The lines are safe
   * from kill -9 as soon as they are appended; the fsync adds power-loss durability without
   * blocking the event loop (200 runs ending at once would hold it for hundreds of milliseconds).
   */
  runEnded(run: string, agent: string): void {
    const held = this.#held.get(run);
    if (!held) return this.#ended(run, agent);
    held.ended = true;
    void this.openRun(run);
  }

  #ended(run: string, agent: string): void {
    for (const file of [
      runEventsFile(this.#dataDirectory, run),
      agentEventsFile(this.#dataDirectory, agent),
    ]) {
      flushToDeviceLater(file, (error) =>
        this.#logger.warn({ err: error, file }, "could not fsync an event log"),
      );
    }
    this.#checkedRunLogs.delete(run);
    this.#files.close(runEventsFile(this.#dataDirectory, run));
  }

  /**
   * A run's lines with id > after: held in memory while its log is not created yet, else its log,
   * or, for a log a crash left missing or empty, its lines in the agent's log (`agent` known).
   */
  async runEvents(
    run: string,
    after: number,
    agent?: string,
    limit = Number.POSITIVE_INFINITY,
  ): Promise<PersistedLine[]> {
    const held = this.#held.get(run);
    if (held) return held.lines.filter((line) => line.id > after).slice(0, limit);
    const file = runEventsFile(this.#dataDirectory, run);
    const state = inspectLogFile(file);
    if (state.kind !== "regular" || state.size === 0) {
      if (agent === undefined) return [];
      const lines = await readRunLinesOfAgentLog(agentEventsFile(this.#dataDirectory, agent), run, after);
      return lines.slice(0, limit);
    }
    const logged = await readEventLog(file, after, limit);
    return logged.map(({ event, line }) => ({ id: event.id, line }));
  }

  /**
   * An agent's events with id > after, from its closed segments (those ending after `after`) on to
   * its current one. Events of deleted segments (past retention) are not there: the answer starts
   * at the oldest kept.
   */
  async history(agent: string, after: number, limit: number): Promise<PersistedLine[]> {
    const current = agentEventsFile(this.#dataDirectory, agent);
    const files = [
      ...agentLogSegments(this.#dataDirectory, agent)
        .filter((segment) => segment.lastId > after)
        .map((segment) => segment.file),
      // A FIFO or a folder in the log's place (not moved aside) is not read: it could block a thread.
      ...(inspectLogFile(current).kind === "damaged" ? [] : [current]),
    ];
    const found: PersistedLine[] = [];
    for (const file of files) {
      if (found.length >= limit) break;
      const logged = await readEventLog(file, found.at(-1)?.id ?? after, limit - found.length);
      found.push(...logged.map(({ event, line }) => ({ id: event.id, line })));
    }
    return found;
  }

  /** Counts what an agent's current segment grew by; past its size, closes it (the next event starts a new one). */
  #grew(agent: string, file: string, lastId: number, bytes: number): void {
    const known = this.#agentBytes.get(agent);
    // The first append of this process: the file's size already counts the line.
    const size =
      known === undefined ? (statSync(file, { throwIfNoEntry: false })?.size ?? bytes) : known + bytes;
    if (size < this.#segmentBytes) {
      this.#agentBytes.set(agent, size);
      return;
    }
    this.#files.close(file);
    this.#agentBytes.delete(agent);
    try {
      closeAgentSegment(this.#dataDirectory, agent, file, lastId);
    } catch (error) {
      this.#logger.warn({ err: error, file }, "could not close an agent-log segment; it goes on growing");
    }
  }

  /** Writes the logs still held (runs queued or ending now), then closes every log. */
  close(): void {
    for (const [run, held] of [...this.#held]) {
      this.#held.delete(run);
      if (held.lines.length === 0) continue;
      try {
        this.#files.append(runEventsFile(this.#dataDirectory, run), joinLines(held.lines));
      } catch (error) {
        this.#logger.error(
          { err: error, run },
          "could not write a run log (its events are in the agent's log)",
        );
      }
    }
    this.#files.closeAll();
  }

  #appendToRunLog(run: string, agent: string, line: string, data: Buffer): void {
    const file = this.#runFile(run);
    if (!this.#checkedRunLogs.has(run)) {
      this.#checkRunLog(run, agent, file, line);
      this.#checkedRunLogs.add(run);
    }
    this.#checkNotBlocked(file);
    this.#files.append(file, data);
  }

  #agentFile(agent: string): string {
    if (this.#lastAgent?.agent !== agent) {
      this.#lastAgent = { agent, file: agentEventsFile(this.#dataDirectory, agent) };
    }
    return this.#lastAgent.file;
  }

  #runFile(run: string): string {
    if (this.#lastRun?.run !== run) this.#lastRun = { run, file: runEventsFile(this.#dataDirectory, run) };
    return this.#lastRun.file;
  }

  /** Before a run's first line in this process: its log repaired, or rebuilt when missing. */
  #checkRunLog(run: string, agent: string, file: string, line: string): void {
    let state = inspectLogFile(file);
    if (state.kind === "regular" && state.size > 0) {
      try {
        // A run resumed after a crash may have a torn last line: cut it before appending.
        if (repairTornTail(file) > 0) {
          this.#logger.warn({ file }, "cut a torn last line off a run log (crash mid-write)");
        }
        return;
      } catch (error) {
        state = { kind: "damaged", reason: errorReason(error) };
      }
    }
    if (state.kind === "damaged" && !this.#blocked.has(file)) {
      if (!moveAsideDamaged(file, state.reason, this.#logger)) this.#blocked.add(file);
    }
    this.#checkNotBlocked(file);
    // Queued when a crash came, its log was never created (or it was lost): the agent's log has its lines.
    this.#rebuild(run, agent, line);
  }

  #checkNotBlocked(file: string): void {
    if (!this.#blocked.has(file)) return;
    throw new AgentdError(
      "STORE_WRITE_FAILED",
      `${file} is not a file agentd can write (see the start's log)`,
      {
        file,
        hint: `stop the daemon, move ${file} aside and start it again`,
      },
    );
  }

  /** Writes a missing run log from the run's earlier lines in its agent's log (`line` comes next). */
  #rebuild(run: string, agent: string, line: string): void {
    const agentFile = agentEventsFile(this.#dataDirectory, agent);
    let byRun = this.#rebuildSources.get(agentFile);
    if (!byRun) {
      byRun = runLinesOfAgentLog(agentFile);
      this.#rebuildSources.set(agentFile, byRun);
      // Lines appended after this turn are not in it.
      setImmediate(() => this.#rebuildSources.delete(agentFile));
    }
    const earlier = (byRun.get(run) ?? []).filter((earlierLine) => earlierLine !== line);
    if (earlier.length === 0) return;
    const file = runEventsFile(this.#dataDirectory, run);
    this.#logger.warn(
      { file, from: agentFile, run, lines: earlier.length },
      "rebuilt a missing or empty run log from its agent's log",
    );
    this.#files.append(file, `${earlier.join("\n")}\n`);
  }
}

function joinLines(lines: PersistedLine[]): string {
  return lines.map(({ line }) => `${line}\n`).join("");
}
