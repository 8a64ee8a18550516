import { readdir, rm } from "node:fs/promises";
import path from "node:path";
import { type Clock, systemClock } from "../clock/clock.js";
import { SyncedGroupedAppend } from "../util/synced-grouped-append.js";
import {
  AUDIT_CURSOR,
  type AuditDraft,
  type AuditEntry,
  AuditEntrySchema,
  AuditEntryMaker,
} from "./audit-entry.js";
import type { AuditLog } from "./audit-log.js";
import type { Logger } from "../logging/logger.js";
import { readRegularFile } from "../util/read-regular-file.js";
import { errnoCodeOf } from "../util/errno-code.js";

const DAY_FILE = /^(\d{4}-\d{2}-\d{2})\.jsonl$/;

/** `<data_dir>/audit`: one JSON-lines file per UTC day. */
export function auditFolder(dataDirectory: string): string {
  return path.join(dataDirectory, "audit");
}

/**
 * The audit trail in `<data_dir>/audit/<day>.jsonl`: each entry one line, appended whole (or not at
 * all) in append mode and flushed to the disk before `append` resolves, so the daemon and a CLI
 * command can both append. The entries of one turn of the event loop (20 scheduled runs starting in
 * the same second, a burst of requests) share one write and one flush, made off the event loop
 * (SyncedGroupedAppend). Lines that do not parse (a torn end after a crash) are skipped on read.
 */
export class FilesAuditLog implements AuditLog {
  readonly #folder: string;
  readonly #clock: Clock;
  readonly #appends = new SyncedGroupedAppend();
  readonly #node: string | undefined;
  readonly #logger: Logger | undefined;
  /** The day files found unreadable, said once each. */
  readonly #unreadableSaid = new Set<string>();
  /** Ids in the order this log made them. */
  readonly #entries = new AuditEntryMaker();

  constructor(dataDirectory: string, options: { clock?: Clock; node?: string; logger?: Logger } = {}) {
    this.#folder = auditFolder(dataDirectory);
    this.#clock = options.clock ?? systemClock;
    this.#node = options.node;
    this.#logger = options.logger;
  }

  async append(draft: AuditDraft): Promise<AuditEntry> {
    const entry = this.#entries.make(draft, new Date(this.#clock.now()), this.#node);
    const file = path.join(this.#folder, `${entry.time.slice(0, 10)}.jsonl`);
    await this.#appends.append(file, JSON.stringify(entry));
    return entry;
  }

  /** Writes what is pending and closes the day's file kept open. */
  close(): Promise<void> {
    return this.#appends.close();
  }

  async page(after: string | undefined, limit: number): Promise<AuditEntry[]> {
    let names: string[];
    try {
      names = await readdir(this.#folder);
    } catch (error) {
      if (this.#noFolder(error)) return [];
      throw error;
    }
    const afterDay = after === undefined ? "" : dayOfId(after);
    const days = names
      .map((name) => DAY_FILE.exec(name)?.[1])
      .filter((day): day is string => day !== undefined && day >= afterDay)
      .sort();
    const entries: AuditEntry[] = [];
    for (const day of days) {
      const text = (await this.#readDay(path.join(this.#folder, `${day}.jsonl`))) ?? "";
      for (const line of text.split("\n")) {
        const entry = parseLine(line);
        if (entry !== undefined && (after === undefined || entry.id > after)) entries.push(entry);
      }
      // Days are in order: once a day filled the page, later days cannot come before it.
      if (entries.length >= limit) break;
    }
    entries.sort((left, right) => (left.id < right.id ? -1 : left.id > right.id ? 1 : 0));
    return entries.slice(0, limit);
  }

  /**
   * Deletes the day files whose whole day is before `before` (UTC): an entry goes with its day, at
   * most a day after it is past retention. Counts the entries deleted.
   */
  async prune(before: Date): Promise<number> {
    let names: string[];
    try {
      names = await readdir(this.#folder);
    } catch (error) {
      if (this.#noFolder(error)) return 0;
      throw error;
    }
    const firstKept = before.toISOString().slice(0, 10);
    let deleted = 0;
    for (const name of names) {
      const day = DAY_FILE.exec(name)?.[1];
      if (day === undefined || day >= firstKept) continue;
      const file = path.join(this.#folder, name);
      const text = await this.#readDay(file);
      // What cannot be read is left where it is, for whoever looks at it.
      if (text === undefined) continue;
      deleted += text.split("\n").filter((line) => parseLine(line) !== undefined).length;
      await rm(file, { force: true });
    }
    return deleted;
  }

  /** Whether the audit folder is missing (no entries yet) or something else is in its place (said once). */
  #noFolder(error: unknown): boolean {
    const code = errnoCodeOf(error);
    if (code === "ENOTDIR" && !this.#unreadableSaid.has(this.#folder)) {
      this.#unreadableSaid.add(this.#folder);
      this.#logger?.error(
        { file: this.#folder },
        `${this.#folder} is not a folder: the audit trail can be neither read nor written; move it aside (look at it, then delete it) and restart`,
      );
    }
    return code === "ENOENT" || code === "ENOTDIR";
  }

  /**
   * A day file's text, or undefined when it is no regular file (a folder, a FIFO that would hold the
   * read for ever, a link to a device that would fill memory) or cannot be read: the other days are
   * still served, and a warning names it once.
   */
  async #readDay(file: string): Promise<string | undefined> {
    try {
      return await readRegularFile(file);
    } catch (error) {
      if (errnoCodeOf(error) === "ENOENT") return "";
      if (!this.#unreadableSaid.has(file)) {
        this.#unreadableSaid.add(file);
        this.#logger?.warn(
          { file, err: error },
          `an audit day file cannot be read (${error instanceof Error ? error.message : String(error)}): its entries are left out of GET /audit; move ${file} aside, look at it, then delete it`,
        );
      }
      return undefined;
    }
  }
}

function parseLine(line: string): AuditEntry | undefined {
  if (line.trim() === "") return undefined;
  try {
    const parsed = AuditEntrySchema.safeParse(JSON.parse(line));
    // An id that is not the one its time makes is damaged (a flipped byte that left valid JSON):
    // kept, an id years ahead would become a reader's cursor, and every later entry sort before it.
    return parsed.success && idMatchesTime(parsed.data) ? parsed.data : undefined;
  } catch {
    return undefined;
  }
}

function idMatchesTime(entry: AuditEntry): boolean {
  return AUDIT_CURSOR.test(entry.id) && Number.parseInt(entry.id.slice(0, 12), 36) === Date.parse(entry.time);
}

/**
 * The UTC day (YYYY-MM-DD) an entry id was made on; for a cursor past any date there can be (a
 * well-formed `after` a client made up), one after every day's file.
 */
function dayOfId(id: string): string {
  const milliseconds = Number.parseInt(id.slice(0, 12), 36);
  if (!Number.isFinite(milliseconds)) return "";
  const date = new Date(milliseconds);
  return Number.isNaN(date.getTime()) ? "~" : date.toISOString().slice(0, 10);
}
