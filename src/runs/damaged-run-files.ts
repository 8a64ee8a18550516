import {
  closeSync,
  constants,
  lstatSync,
  mkdirSync,
  openSync,
  readFileSync,
  renameSync,
  type Stats,
} from "node:fs";
import path from "node:path";
import { AgentdError } from "../errors/agentd-error.js";
import type { Logger } from "../logging/logger.js";
import type { RunRecord } from "../run-vocabulary/run-record.js";
import { parseJsonAs } from "../schema/parse-json-as.js";
import { RunRecordSchema } from "./run-record-schema.js";

/** What sits where a run's record should be. */
export type RecordFileState =
  | { kind: "missing" }
  | { kind: "read"; record: RunRecord }
  /** A folder, a symbolic link, a FIFO, an empty or garbled file: nothing to serve as it is. */
  | { kind: "damaged"; reason: string };

/**
 * Reads `runs/<run>.json` without following a symbolic link and without opening anything but a
 * regular file (a FIFO would block the read). A record is replaced whole by a rename, so an empty
 * or garbled one was damaged after it was written.
 */
export function inspectRecordFile(file: string): RecordFileState {
  let stats: Stats | undefined;
  try {
    stats = lstatSync(file, { throwIfNoEntry: false });
  } catch (error) {
    return { kind: "damaged", reason: errorReason(error) };
  }
  if (!stats) return { kind: "missing" };
  if (!stats.isFile()) return { kind: "damaged", reason: kindOf(stats) };
  let text: string;
  try {
    const descriptor = openSync(file, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
    try {
      text = readFileSync(descriptor, "utf8");
    } finally {
      closeSync(descriptor);
    }
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return { kind: "missing" };
    return { kind: "damaged", reason: errorReason(error) };
  }
  if (text.trim() === "") return { kind: "damaged", reason: "empty" };
  const record = parseJsonAs(RunRecordSchema, text);
  if (!record) return { kind: "damaged", reason: "not a readable run record" };
  // A record copied over another run's file would serve one run as another.
  if (`${record.id}.json` !== path.basename(file)) return { kind: "damaged", reason: "another run's record" };
  return { kind: "read", record };
}

/**
 * Moves what sits at `file` aside to `<file>.damaged-<time>` (a symbolic link is moved, never
 * followed; nothing is deleted), and says once what was done and what to do next. Returns where it
 * went, or undefined when even the move failed (logged with the file to move aside by hand).
 */
export function moveRunFileAside(
  file: string,
  reason: string,
  logger: Logger,
  consequence: string,
  now = new Date(),
): string | undefined {
  const aside = `${file}.damaged-${now.toISOString().replaceAll(":", "-")}`;
  try {
    renameSync(file, aside);
  } catch (error) {
    logger.error(
      { file, reason, err: error },
      `${file} cannot be used (${reason}) nor moved aside: move it aside by hand and restart`,
    );
    return undefined;
  }
  logger.warn(
    { file, moved_to: aside, reason },
    `moved ${file} aside (${reason}): ${consequence}; look at ${aside}, then delete it`,
  );
  return aside;
}

/**
 * Makes sure `directory` is a folder of its own: created when missing; anything else there (a
 * file, a symbolic link, even one to a folder) is moved aside first. Returns whether something was
 * moved; throws, naming the path, when it could not be.
 */
export function ensureRunFolder(directory: string, logger: Logger, consequence: string): boolean {
  let stats: Stats | undefined;
  let reason: string | undefined;
  try {
    stats = lstatSync(directory, { throwIfNoEntry: false });
    if (stats && !stats.isDirectory()) reason = kindOf(stats);
  } catch (error) {
    reason = errorReason(error);
  }
  const moved = reason !== undefined;
  if (reason !== undefined && moveRunFileAside(directory, reason, logger, consequence) === undefined) {
    throw new AgentdError("INTERNAL", `${directory} is ${reason} where a folder of agentd should be`, {
      hint: `move ${directory} aside by hand and start again`,
    });
  }
  mkdirSync(directory, { recursive: true, mode: 0o700 });
  return moved;
}

/** What a path holds instead of what agentd expects, in a few words. */
export function kindOf(stats: Stats): string {
  if (stats.isDirectory()) return "a folder";
  if (stats.isSymbolicLink()) return "a symbolic link";
  if (stats.isFile()) return "a file";
  return "not a regular file";
}

function errorReason(error: unknown): string {
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  if (code !== undefined) return `cannot be read (${code})`;
  return error instanceof Error ? error.message : String(error);
}
