import {
  closeSync,
  lstatSync,
  openSync,
  readdirSync,
  readFileSync,
  readSync,
  rmSync,
  statSync,
  writeSync,
} from "node:fs";
import { readFile } from "node:fs/promises";
import path from "node:path";
import type { Logger } from "../logging/logger.js";
import { GroupedAppend } from "../util/grouped-append.js";
import { ensureRunFolder, kindOf, moveRunFileAside } from "./damaged-run-files.js";
import { replaceFile } from "../util/replace-file.js";
import { type RunIndexLine, RunIndexLineSchema } from "./run-record-schema.js";

/** A segment is closed and a new one begun once it holds this much (about 2,500 runs). */
export const DEFAULT_SEGMENT_BYTES = 256 * 1024;
/** Closed segments kept parsed in memory for listing (the current one always is once read). */
const CACHED_SEGMENTS = 4;
const SEGMENT_NAME = /^(\d{8})\.jsonl$/;

/** A segment's file name: `00000001.jsonl`, numbered in creation order. */
function segmentFileName(number: number): string {
  return `${String(number).padStart(8, "0")}.jsonl`;
}

/**
 * The run index: `<data_dir>/runs/index/<n>.jsonl`, one small line per run (id, agent, creation
 * time, parent) in creation order, split into segments of about 256 KB. New runs are appended to the
 * last segment by group commit (GroupedAppend); older segments are read only when a listing pages
 * back into them or a prune goes over them, never at start. A torn or garbled line is skipped (with
 * a warning) and the rest of its segment kept.
 */
export class RunIndex {
  readonly directory: string;
  readonly #logger: Logger;
  readonly #segmentBytes: number;
  /** Segment numbers, oldest first; the last is the one appended to. */
  #segments: number[] = [];
  #current!: GroupedAppend;
  /** Bytes of the current segment, counting lines appended and not written yet. */
  #currentBytes = 0;
  /** The current segment's lines as far as a listing read them (new lines are read on from there). */
  #currentLines: { lines: RunIndexLine[]; bytes: number } | undefined;
  /** Closed segments parsed for listing, least recently used first. */
  readonly #cached = new Map<number, RunIndexLine[]>();
  #movedAside = 0;

  constructor(options: { runsDirectory: string; logger: Logger; segmentBytes?: number }) {
    this.directory = path.join(options.runsDirectory, "index");
    this.#logger = options.logger;
    this.#segmentBytes = options.segmentBytes ?? DEFAULT_SEGMENT_BYTES;
  }

  /** Lists the segments (reading none of them) and makes ready to append; ends a torn last line. */
  open(): void {
    if (ensureRunFolder(this.directory, this.#logger, "the run index is rebuilt from the run records"))
      this.#movedAside += 1;
    this.#segments = readdirSync(this.directory)
      .flatMap((name) => {
        const match = SEGMENT_NAME.exec(name);
        if (!match?.[1]) return [];
        // A folder, a link or a FIFO where a segment should be is never read nor appended to.
        const file = path.join(this.directory, name);
        const stats = lstatSync(file, { throwIfNoEntry: false });
        if (!stats || stats.isFile()) return [Number(match[1])];
        moveRunFileAside(file, kindOf(stats), this.#logger, "the run index is rebuilt from the run records");
        this.#movedAside += 1;
        return [];
      })
      .sort((left, right) => left - right);
    if (this.#segments.length === 0) this.#segments.push(1);
    const file = this.#fileOf(this.#currentNumber);
    this.#currentBytes = statSync(file, { throwIfNoEntry: false })?.size ?? 0;
    if (this.#currentBytes > 0 && lastByteOf(file) !== "\n") {
      // A line torn by a crash is ended, so the next run's line does not join it.
      const descriptor = openSync(file, "a", 0o600);
      try {
        writeSync(descriptor, "\n");
      } finally {
        closeSync(descriptor);
      }
      this.#currentBytes += 1;
      this.#logger.warn({ file }, "ended a torn last line of the run index");
    }
    this.#current = new GroupedAppend(file);
  }

  /**
   * The first of the two newest segments (the one being appended to, then the one closed last)
   * with lines that cannot be read, and how many; read whole (at a start: 512 KB at most). Their
   * size alone does not tell a power cut's damage: ext4 can leave a file its size with the blocks
   * of its last writes reading as NULs, and a segment is closed without an fsync, so the one before
   * the newest is as exposed when the newest began just before the cut.
   */
  unreadableInNewest(): { segment: string; lines: number } {
    for (const number of this.#segments.slice(-2).reverse()) {
      let text: string;
      try {
        text = readFileSync(this.#fileOf(number), "utf8");
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code === "ENOENT") continue;
        throw error;
      }
      const lines = parseIndexText(text).unreadable;
      if (lines > 0) return { segment: segmentFileName(number), lines };
    }
    return { segment: segmentFileName(this.#currentNumber), lines: 0 };
  }

  /** How many things found where the index or a segment should be were moved aside (the index is then rebuilt). */
  get movedAside(): number {
    return this.#movedAside;
  }

  /** Segment numbers, oldest first. */
  get segments(): readonly number[] {
    return this.#segments;
  }

  /** The size on disk of every segment (a missing one is left out). */
  sizes(): Record<string, number> {
    const sizes: Record<string, number> = {};
    for (const number of this.#segments) {
      const size = statSync(this.#fileOf(number), { throwIfNoEntry: false })?.size;
      if (size !== undefined) sizes[segmentFileName(number)] = size;
    }
    return sizes;
  }

  /** Lines appended and not yet in the kernel. */
  get pending(): number {
    return this.#current.pending;
  }

  /**
   * Appends a run's line; resolves once it is in the kernel, with where the segment ends after it
   * (recorded in the journal: a segment found shorter at start was damaged). A full segment is
   * closed first.
   */
  async append(line: RunIndexLine): Promise<{ segment: string; bytes: number }> {
    const text = JSON.stringify(line);
    if (this.#currentBytes > 0 && this.#currentBytes + text.length + 1 > this.#segmentBytes) this.#roll();
    this.#currentBytes += Buffer.byteLength(text) + 1;
    const position = { segment: segmentFileName(this.#currentNumber), bytes: this.#currentBytes };
    try {
      await this.#current.append(text);
    } catch (error) {
      // Whatever part of it reached the file, the count goes on from what is there.
      this.#currentBytes = statSync(this.#fileOf(this.#currentNumber), { throwIfNoEntry: false })?.size ?? 0;
      throw error;
    }
    return position;
  }

  /**
   * A segment's lines, oldest first (kept in memory for the next pages). Unreadable lines are
   * skipped with a warning; a missing segment has none.
   */
  linesOf(segment: number): RunIndexLine[] {
    if (segment === this.#currentNumber) return this.#readCurrent();
    let lines = this.#cached.get(segment);
    if (lines) this.#cached.delete(segment);
    else lines = this.#read(segment);
    this.#cached.set(segment, lines);
    if (this.#cached.size > CACHED_SEGMENTS) this.#cached.delete(this.#cached.keys().next().value ?? segment);
    return lines;
  }

  /** A segment's lines read off the event loop (a prune), without keeping them. */
  async readLines(segment: number): Promise<RunIndexLine[]> {
    const file = this.#fileOf(segment);
    let text: string;
    try {
      text = await readFile(file, "utf8");
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === "ENOENT") return [];
      throw error;
    }
    const { lines, unreadable } = parseIndexText(text.slice(0, text.lastIndexOf("\n") + 1));
    if (unreadable > 0)
      this.#logger.warn({ file, lines: unreadable }, "skipped unreadable lines of the run index");
    return lines;
  }

  /** The first run of a segment, from its first line alone (undefined when it has none readable). */
  firstRunOf(segment: number): string | undefined {
    const cached = segment === this.#currentNumber ? this.#currentLines?.lines : this.#cached.get(segment);
    if (cached) return cached[0]?.run;
    const head = readHead(this.#fileOf(segment), 512);
    const match = /^\{"run":"(r_[0-9a-z]+)"/.exec(head);
    return match?.[1];
  }

  /**
   * Replaces a closed segment with the lines kept (deletes it when none are): a prune. The
   * current segment is never rewritten (runs are appended to it); its pruned lines stay until it
   * is closed and pruned again, and a listing skips them (their records are gone).
   */
  async rewrite(segment: number, kept: RunIndexLine[]): Promise<void> {
    if (segment === this.#currentNumber) return;
    this.#cached.delete(segment);
    const file = this.#fileOf(segment);
    if (kept.length === 0) {
      rmSync(file, { force: true });
      this.#segments = this.#segments.filter((number) => number !== segment);
      return;
    }
    await replaceFile(file, kept.map((line) => `${JSON.stringify(line)}\n`).join(""), { sync: false });
  }

  /** The text a rewrite of `kept` would have: its size, recorded before the rewrite. */
  static sizeOf(kept: RunIndexLine[]): number {
    return kept.reduce((total, line) => total + Buffer.byteLength(JSON.stringify(line)) + 1, 0);
  }

  static fileNameOf(segment: number): string {
    return segmentFileName(segment);
  }

  /** Closes the segment being appended to (lines appended meanwhile are written first). */
  close(): void {
    this.#current.close();
  }

  get #currentNumber(): number {
    return this.#segments.at(-1) ?? 1;
  }

  #roll(): void {
    this.#current.close();
    const closed = this.#currentNumber;
    this.#currentLines = undefined;
    this.#segments.push(closed + 1);
    this.#currentBytes = 0;
    this.#current = new GroupedAppend(this.#fileOf(closed + 1));
  }

  #fileOf(segment: number): string {
    return path.join(this.directory, segmentFileName(segment));
  }

  /** The current segment's lines: those read before, and the lines written since. */
  #readCurrent(): RunIndexLine[] {
    const file = this.#fileOf(this.#currentNumber);
    const size = statSync(file, { throwIfNoEntry: false })?.size ?? 0;
    let known = this.#currentLines;
    if (!known || size < known.bytes) known = this.#currentLines = { lines: [], bytes: 0 };
    if (size === known.bytes) return known.lines;
    const buffer = readRange(file, known.bytes, size - known.bytes);
    // Only whole lines: one being written is read at the next listing.
    const end = buffer.lastIndexOf(0x0a) + 1;
    const { lines, unreadable } = parseIndexText(buffer.toString("utf8", 0, end));
    if (unreadable > 0)
      this.#logger.warn({ file, lines: unreadable }, "skipped unreadable lines of the run index");
    known.lines.push(...lines);
    known.bytes += end;
    return known.lines;
  }

  #read(segment: number): RunIndexLine[] {
    const file = this.#fileOf(segment);
    let text: string;
    try {
      text = readFileSync(file, "utf8");
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === "ENOENT") return [];
      throw error;
    }
    const { lines, unreadable } = parseIndexText(text);
    if (unreadable > 0)
      this.#logger.warn({ file, lines: unreadable }, "skipped unreadable lines of the run index");
    return lines;
  }
}

/** The lines of an index segment's text, and how many could not be read (torn or garbled). */
export function parseIndexText(text: string): { lines: RunIndexLine[]; unreadable: number } {
  const lines: RunIndexLine[] = [];
  let unreadable = 0;
  for (const line of text.split("\n")) {
    if (line.trim() === "") continue;
    const parsed = parseJson(line);
    // Our own file, read a segment at a time: the cheap check first, the schema for the odd line.
    if (isIndexLine(parsed)) lines.push(parsed);
    else {
      const checked = RunIndexLineSchema.safeParse(parsed);
      if (checked.success) lines.push(checked.data);
      else unreadable += 1;
    }
  }
  return { lines, unreadable };
}

const RUN_ID = /^r_[0-9a-z]+$/;

/** The shape RunIndexLineSchema checks, without its cost (tens of thousands of lines a page). */
function isIndexLine(value: unknown): value is RunIndexLine {
  if (typeof value !== "object" || value === null) return false;
  const line = value as Record<string, unknown>;
  return (
    typeof line.run === "string" &&
    RUN_ID.test(line.run) &&
    typeof line.agent === "string" &&
    typeof line.created_at === "string" &&
    (line.parent_run === undefined || typeof line.parent_run === "string") &&
    (line.idempotency_key === undefined || typeof line.idempotency_key === "string") &&
    Object.keys(line).length <= 5
  );
}

export function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

function lastByteOf(file: string): string {
  const descriptor = openSync(file, "r");
  try {
    const size = statSync(file).size;
    const buffer = Buffer.alloc(1);
    readSync(descriptor, buffer, 0, 1, size - 1);
    return buffer.toString("latin1");
  } finally {
    closeSync(descriptor);
  }
}

function readRange(file: string, start: number, length: number): Buffer {
  const descriptor = openSync(file, "r");
  try {
    const buffer = Buffer.alloc(length);
    const read = readSync(descriptor, buffer, 0, length, start);
    return buffer.subarray(0, read);
  } finally {
    closeSync(descriptor);
  }
}

function readHead(file: string, bytes: number): string {
  let descriptor: number;
  try {
    descriptor = openSync(file, "r");
  } catch {
    return "";
  }
  try {
    const buffer = Buffer.alloc(bytes);
    const read = readSync(descriptor, buffer, 0, bytes, 0);
    return buffer.toString("utf8", 0, read);
  } finally {
    closeSync(descriptor);
  }
}
