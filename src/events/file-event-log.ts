import { mkdirSync, open, statSync } from "node:fs";
import { promisify } from "node:util";
import { AgentdError } from "../errors/agentd-error.js";
import type { Logger } from "../logging/logger.js";
import { flushToDeviceLater } from "../util/flush-to-device.js";
import type { AgentEvent } from "./agent-event.js";
import type { EventLog, PersistedLine } from "./event-log.js";
import { agentEventsDirectory, agentEventsFile, runEventsFile, runsDirectory } from "./event-paths.js";
import { type LoadedAgentLog, loadAgentLogs } from "./load-agent-logs.js";
import { repairTornTail } from "./log-tail.js";
import { OpenLogFiles } from "./open-log-files.js";
import { readEventLog } from "./read-event-log.js";
import { RunLinesOfAgentLogs, readRunLinesOfAgentLog } from "./run-lines-of-agent-log.js";

const openForAppend = promisify(open);

/** A new run's log being created off the event loop: its lines wait here, in order, until it exists. */
interface RunLogCreation {
  agent: string;
  lines: string[];
  /** The run ended meanwhile: its log is flushed and closed once its lines are written. */
  ended: boolean;
  created: Promise<void>;
}

/**
 * The events as JSONL files in `data_dir`: `events/<agent>.jsonl` and `runs/<run>.events.jsonl`,
 * appended synchronously (safe from kill -9 once `append` returns) and flushed to the device in the
 * background when a run ends. See event-paths.ts for the layout.
 *
 * A new run's log is created off the event loop (a file creation costs about 1 ms on a journaling
 * disk, and creations in one folder do not overlap: 200 runs started at once would wait 260 ms for
 * theirs). Until it exists, the run's lines wait in memory; each is already in its agent's log,
 * which is what makes it durable: a run log that a crash left missing or empty is rebuilt from the
 * agent's log before the run's next line, and read from there meanwhile.
 */
export class FileEventLog implements EventLog {
  readonly #dataDirectory: string;
  readonly #logger: Logger;
  /** Run logs checked for a torn last line in this process. */
  readonly #checkedRunLogs = new Set<string>();
  readonly #files = new OpenLogFiles();
  readonly #creating = new Map<string, RunLogCreation>();
  readonly #agentLogLines = new RunLinesOfAgentLogs();
  #closed = false;

  constructor(options: { dataDirectory: string; logger: Logger }) {
    this.#dataDirectory = options.dataDirectory;
    this.#logger = options.logger;
  }

  load(count: number): Promise<LoadedAgentLog[]> {
    mkdirSync(agentEventsDirectory(this.#dataDirectory), { recursive: true });
    mkdirSync(runsDirectory(this.#dataDirectory), { recursive: true });
    return Promise.resolve(loadAgentLogs(this.#dataDirectory, count, this.#logger));
  }

  append(event: AgentEvent, line: string): void {
    try {
      this.#files.append(agentEventsFile(this.#dataDirectory, event.agent), `${line}\n`);
      if (event.run !== null) this.#appendToRunLog(event.run, event.agent, line);
    } catch (error) {
      if (AgentdError.is(error)) throw error;
      this.#logger.error({ err: error, agent: event.agent, id: event.id }, "could not persist an event");
      throw new AgentdError("STORE_WRITE_FAILED", `could not write event ${event.id} of ${event.agent}`, {
        file: agentEventsFile(this.#dataDirectory, event.agent),
        hint: "check that data_dir is writable and the disk is not full",
        cause: error,
      });
    }
  }

  prepareRun(run: string, agent: string): void {
    if (this.#creating.has(run)) return;
    const file = runEventsFile(this.#dataDirectory, run);
    const creation: RunLogCreation = { agent, lines: [], ended: false, created: Promise.resolve() };
    this.#creating.set(run, creation);
    creation.created = openForAppend(file, "a", 0o600).then(
      (descriptor) => {
        // A plain descriptor (not a FileHandle): OpenLogFiles writes and closes it synchronously.
        this.#files.adopt(file, descriptor);
        // Just created for a new run: there is no torn line to look for.
        this.#checkedRunLogs.add(run);
        this.#created(run, creation);
      },
      (error: unknown) => {
        this.#logger.debug({ err: error, file }, "could not create a run log ahead; its next line will");
        this.#created(run, creation);
      },
    );
  }

  /** The run's log exists (or could not be made ahead): the lines that waited go out in one write. */
  #created(run: string, creation: RunLogCreation): void {
    this.#creating.delete(run);
    try {
      if (this.#checkedRunLogs.has(run)) {
        if (creation.lines.length > 0) {
          this.#files.append(runEventsFile(this.#dataDirectory, run), `${creation.lines.join("\n")}\n`);
        }
      } else if (creation.lines.length > 0) {
        // Not made ahead: made now, from the agent's log (which has these lines).
        this.#checkedRunLogs.add(run);
        this.#rebuild(run, creation.agent, creation.lines);
      }
    } catch (error) {
      this.#logger.error(
        { err: error, run },
        "could not write a run log (its events are in the agent's log)",
      );
    }
    if (creation.ended) this.#ended(run, creation.agent);
    // Created after the log was closed (a run made just before shutdown): its lines are written,
    // and its descriptor is not kept.
    else if (this.#closed) this.#files.close(runEventsFile(this.#dataDirectory, run));
  }

  /**
   * Flushes the run's log and its agent's log to the device in the background. The lines are safe
   * from kill -9 as soon as they are appended; the fsync adds power-loss durability without
   * blocking the event loop (200 runs ending at once would hold it for hundreds of milliseconds).
   */
  runEnded(run: string, agent: string): void {
    const creation = this.#creating.get(run);
    if (creation) creation.ended = true;
    else this.#ended(run, agent);
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
   * A run's lines with id > after. A run log a crash cut off (missing or empty) is read from the
   * agent's log when the agent is known.
   */
  async runEvents(run: string, after: number, agent?: string): Promise<PersistedLine[]> {
    await this.#creating.get(run)?.created;
    const file = runEventsFile(this.#dataDirectory, run);
    if (agent !== undefined && isMissingOrEmpty(file)) {
      return readRunLinesOfAgentLog(agentEventsFile(this.#dataDirectory, agent), run, after);
    }
    const logged = await readEventLog(file, after);
    return logged.map(({ event, line }) => ({ id: event.id, line }));
  }

  async history(agent: string, after: number, limit: number): Promise<PersistedLine[]> {
    const logged = await readEventLog(agentEventsFile(this.#dataDirectory, agent), after, limit);
    return logged.map(({ event, line }) => ({ id: event.id, line }));
  }

  close(): void {
    this.#closed = true;
    this.#files.closeAll();
  }

  #appendToRunLog(run: string, agent: string, line: string): void {
    const creation = this.#creating.get(run);
    if (creation) {
      creation.lines.push(line);
      return;
    }
    const file = runEventsFile(this.#dataDirectory, run);
    if (!this.#checkedRunLogs.has(run)) {
      this.#checkedRunLogs.add(run);
      // Its creation was cut off (a crash) or failed: the agent's log has every line of the run,
      // this one included (written first).
      if (isMissingOrEmpty(file)) return this.#rebuild(run, agent, [line]);
      // A run resumed after a crash may have a torn last line: cut it before appending.
      if (repairTornTail(file) > 0) {
        this.#logger.warn({ file }, "cut a torn last line off a run log (crash mid-write)");
      }
    }
    this.#files.append(file, `${line}\n`);
  }

  /**
   * Writes a missing (or empty) run log from the run's lines in its agent's log; `appended`: the
   * run's lines written to the agent's log in this process, the newest being written now.
   */
  #rebuild(run: string, agent: string, appended: readonly string[]): void {
    const file = runEventsFile(this.#dataDirectory, run);
    const lines = this.#agentLogLines.linesOf(agentEventsFile(this.#dataDirectory, agent), run, appended);
    if (lines.length > appended.length) {
      this.#logger.info({ file, lines: lines.length }, "wrote a run log from its agent's log");
    }
    this.#files.append(file, `${lines.join("\n")}\n`);
  }
}

function isMissingOrEmpty(file: string): boolean {
  return (statSync(file, { throwIfNoEntry: false })?.size ?? 0) === 0;
}
