import { lstatSync, readdirSync, readFileSync, rmSync } from "node:fs";
import path from "node:path";
import type { Logger } from "../logging/logger.js";
import { GroupedAppend } from "../util/grouped-append.js";
import { ensureRunFolder, kindOf, moveRunFileAside } from "./damaged-run-files.js";
import { replaceFileSync } from "../util/replace-file.js";
import type { RunRecord } from "../run-vocabulary/run-record.js";
import { type OpenRunsLine, OpenRunsLineSchema } from "./run-record-schema.js";
import { parseJson } from "./run-index.js";

/** A journal file is begun afresh (from the state in memory) once it grows past this. */
export const DEFAULT_JOURNAL_BYTES = 256 * 1024;
const JOURNAL_NAME = /^(\d{8})\.jsonl$/;

/** Each agent's newest run, by agent id. */
export type NewestRuns = Map<string, { run: string; created_at: string }>;

/** What the journal says at start: the open runs and what the store needs besides. */
export interface OpenRunsState {
  /** Runs open when last written (created, unfinished, or cut off by a crash or a shutdown), in journal order. */
  records: Map<string, RunRecord>;
  newest: NewestRuns;
  /** The index segments' sizes the store last recorded; undefined when no journal was found. */
  segments: Record<string, number> | undefined;
  /** Lines that could not be read (torn or garbled), skipped. */
  unreadable: number;
}

/**
 * The open-runs journal, `<data_dir>/runs/open/<n>.jsonl`: what start-up reads instead of every run
 * record. A new run's whole record is appended here (after its index line) when it is created; a
 * run leaving the open set (finished for good, or pruned) gets a `closed` line. At every start, and
 * whenever it grows past 256 KB, a fresh file is begun with the open runs alone (written whole,
 * then the older files deleted; a crash in between leaves both, and the newer `start` line wins).
 */
export class OpenRunsJournal {
  readonly directory: string;
  readonly #logger: Logger;
  readonly #maxBytes: number;
  #number = 0;
  #movedAside = 0;
  #append: GroupedAppend | undefined;
  #bytes = 0;

  constructor(options: { runsDirectory: string; logger: Logger; maxBytes?: number }) {
    this.directory = path.join(options.runsDirectory, "open");
    this.#logger = options.logger;
    this.#maxBytes = options.maxBytes ?? DEFAULT_JOURNAL_BYTES;
  }

  /** Folds every journal file, oldest first. */
  read(): OpenRunsState {
    const state: OpenRunsState = {
      records: new Map(),
      newest: new Map(),
      segments: undefined,
      unreadable: 0,
    };
    const consequence = "the open runs are rebuilt from the run records";
    if (ensureRunFolder(this.directory, this.#logger, consequence)) this.#movedAside += 1;
    for (const number of this.#numbers()) {
      this.#number = Math.max(this.#number, number);
      const file = this.#fileOf(number);
      const stats = lstatSync(file, { throwIfNoEntry: false });
      if (stats && !stats.isFile()) {
        // A folder, a link or a FIFO is never read, nor deleted with the older files.
        moveRunFileAside(file, kindOf(stats), this.#logger, consequence);
        this.#movedAside += 1;
        continue;
      }
      let text: string;
      try {
        text = readFileSync(file, "utf8");
      } catch (error) {
        this.#logger.warn({ err: error, file }, "could not read the open-runs journal");
        continue;
      }
      for (const line of text.split("\n")) {
        if (line.trim() === "") continue;
        const parsed = OpenRunsLineSchema.safeParse(parseJson(line));
        if (parsed.success) apply(state, parsed.data);
        else state.unreadable += 1;
      }
    }
    return state;
  }

  /**
   * Begins a fresh journal file holding `state` alone, then deletes the older ones. Written on the
   * event loop so no line can be appended to a file about to go; lines appended to the old file and
   * not written yet are written there first (their runs must be in `state`).
   */
  begin(state: { records: Iterable<RunRecord>; newest: NewestRuns; segments: Record<string, number> }): void {
    this.#append?.close();
    const older = this.#numbers();
    this.#number += 1;
    const lines: OpenRunsLine[] = [
      { start: { segments: state.segments, newest: Object.fromEntries(state.newest) } },
      ...[...state.records].map((record) => ({ record })),
    ];
    const text = lines.map((line) => `${JSON.stringify(line)}\n`).join("");
    const file = this.#fileOf(this.#number);
    replaceFileSync(file, text, { sync: false });
    for (const number of older) rmSync(this.#fileOf(number), { force: true });
    this.#bytes = Buffer.byteLength(text);
    this.#append = new GroupedAppend(file);
  }

  /** How many things found where the journal or one of its files should be were moved aside (`read`). */
  get movedAside(): number {
    return this.#movedAside;
  }

  /** Whether the current file grew past its bound: time to `begin` afresh. */
  get full(): boolean {
    return this.#bytes > this.#maxBytes;
  }

  /** Lines appended and not yet in the kernel. */
  get pending(): number {
    return this.#append?.pending ?? 0;
  }

  /** Appends a line; resolves once it is in the kernel. */
  append(line: OpenRunsLine): Promise<void> {
    if (!this.#append) throw new Error("the open-runs journal is not begun");
    const text = JSON.stringify(line);
    this.#bytes += Buffer.byteLength(text) + 1;
    return this.#append.append(text);
  }

  close(): void {
    this.#append?.close();
  }

  #numbers(): number[] {
    let names: string[];
    try {
      names = readdirSync(this.directory);
    } catch {
      return [];
    }
    return names
      .flatMap((name) => {
        const match = JOURNAL_NAME.exec(name);
        return match?.[1] ? [Number(match[1])] : [];
      })
      .sort((left, right) => left - right);
  }

  #fileOf(number: number): string {
    return path.join(this.directory, `${String(number).padStart(8, "0")}.jsonl`);
  }
}

function apply(state: OpenRunsState, line: OpenRunsLine): void {
  if ("start" in line) {
    state.records.clear();
    state.newest = new Map(Object.entries(line.start.newest));
    state.segments = { ...line.start.segments };
  } else if ("record" in line) {
    const { record } = line;
    state.records.set(record.id, record);
    if (line.index && state.segments) {
      const { segment, bytes } = line.index;
      state.segments[segment] = Math.max(state.segments[segment] ?? 0, bytes);
    }
    noteNewest(state.newest, record);
  } else if ("closed" in line) state.records.delete(line.closed);
  else state.segments = { ...line.segments };
}

/** Makes `record` its agent's newest run unless a later one is known. */
export function noteNewest(newest: NewestRuns, record: RunRecord): void {
  const known = newest.get(record.agent);
  if (!known || known.created_at <= record.created_at) {
    newest.set(record.agent, { run: record.id, created_at: record.created_at });
  }
}
