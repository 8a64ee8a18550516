import { existsSync, mkdirSync, open } from "node:fs";
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

const openForAppend = promisify(open);

/**
 * The events as JSONL files in `data_dir`: `events/<agent>.jsonl` and `runs/<run>.events.jsonl`,
 * appended synchronously (safe from kill -9 once `append` returns) and flushed to the device in the
 * background when a run ends. See event-paths.ts for the layout.
 */
export class FileEventLog implements EventLog {
  readonly #dataDirectory: string;
  readonly #logger: Logger;
  /** Run logs checked for a torn last line in this process. */
  readonly #checkedRunLogs = new Set<string>();
  readonly #files = new OpenLogFiles();

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
      if (event.run !== null) this.#appendToRunLog(event.run, line);
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

  async prepareRun(run: string): Promise<void> {
    const file = runEventsFile(this.#dataDirectory, run);
    try {
      // A plain descriptor (not a FileHandle): OpenLogFiles writes and closes it synchronously.
      const descriptor = await openForAppend(file, "a", 0o600);
      this.#files.adopt(file, descriptor);
      // Just created for a new run: there is no torn line to look for.
      this.#checkedRunLogs.add(run);
    } catch (error) {
      this.#logger.debug({ err: error, file }, "could not create a run log ahead; its first event will");
    }
  }

  /**
   * Flushes the run's log and its agent's log to the device in the background. The lines are safe
   * from kill -9 as soon as they are appended; the fsync adds power-loss durability without
   * blocking the event loop (200 runs ending at once would hold it for hundreds of milliseconds).
   */
  runEnded(run: string, agent: string): void {
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

  async runEvents(run: string, after: number): Promise<PersistedLine[]> {
    const logged = await readEventLog(runEventsFile(this.#dataDirectory, run), after);
    return logged.map(({ event, line }) => ({ id: event.id, line }));
  }

  async history(agent: string, after: number, limit: number): Promise<PersistedLine[]> {
    const logged = await readEventLog(agentEventsFile(this.#dataDirectory, agent), after, limit);
    return logged.map(({ event, line }) => ({ id: event.id, line }));
  }

  close(): void {
    this.#files.closeAll();
  }

  #appendToRunLog(run: string, line: string): void {
    const file = runEventsFile(this.#dataDirectory, run);
    if (!this.#checkedRunLogs.has(run)) {
      // A run resumed after a crash may have a torn last line: cut it before appending.
      if (existsSync(file) && repairTornTail(file) > 0) {
        this.#logger.warn({ file }, "cut a torn last line off a run log (crash mid-write)");
      }
      this.#checkedRunLogs.add(run);
    }
    this.#files.append(file, `${line}\n`);
  }
}
