import { errnoCodeOf } from "./errno-code.js";

/**
 * Error codes that mean the store cannot write for lack of room, not because of a fault in what was
 * written: no space (ENOSPC), over quota (EDQUOT), a read-only remount (EROFS), and PostgreSQL's
 * SQLSTATE disk_full (53100), out_of_memory (53200) and read_only_sql_transaction (25006).
 */
const SPACE_CODES = new Set(["ENOSPC", "EDQUOT", "EROFS", "53100", "53200", "25006"]);

/** What a space failure says: the code found, and the file (or table) it was met on when known. */
export interface SpaceFailure {
  code: string;
  file?: string;
  message: string;
}

/**
 * The space failure an error stands for, looked for along its `cause` chain (an AgentdError
 * STORE_WRITE_FAILED wrapping the errno error, a driver error wrapping the server's), or undefined
 * for any other error. The file is the nearest one named on the chain (`file` of an AgentdError,
 * `path` of an errno error).
 */
export function spaceFailureOf(error: unknown): SpaceFailure | undefined {
  let file: string | undefined;
  const seen = new Set<unknown>();
  for (let current = error; current !== null && typeof current === "object";) {
    if (seen.has(current)) return undefined;
    seen.add(current);
    const fields = current as { file?: unknown; path?: unknown; message?: unknown };
    if (file === undefined) file = stringOf(fields.file) ?? stringOf(fields.path);
    const code = errnoCodeOf(current);
    if (code !== undefined && SPACE_CODES.has(code)) {
      return { code, ...(file === undefined ? {} : { file }), message: stringOf(fields.message) ?? code };
    }
    current = (current as { cause?: unknown }).cause;
  }
  return undefined;
}

function stringOf(value: unknown): string | undefined {
  return typeof value === "string" && value !== "" ? value : undefined;
}

/**
 * What a writer of the store tells, and asks, about whether the store can write: the room of
 * `data_dir` or the database (see StorageState in src/store/).
 */
export interface StorageGate {
  /** True while the store is full: writes fail for lack of space and wait for it. */
  readonly full: boolean;
  /**
   * Tells of a failed write. True when it failed for lack of space (the store is full from now
   * on, until space returns); false for any other failure, which the caller handles as before.
   * `bytes`: how much the write needed; the store is not writable again before that much fits.
   */
  failed(error: unknown, file?: string, bytes?: number): boolean;
  /** Tells of a write that succeeded: the store may have room again (it checks). */
  succeeded(): void;
  /** Resolves once the store can write (at once when it is not full). */
  whenWritable(): Promise<void>;
}
