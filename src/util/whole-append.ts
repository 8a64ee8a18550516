import { fstatSync, ftruncateSync, writeSync } from "node:fs";
import { AgentdError } from "../errors/agentd-error.js";
import { errnoCodeOf } from "./errno-code.js";

/**
 * Appends that land whole or not at all, on descriptors opened in append mode. `writeSync` can
 * write part of a buffer (the disk fills up mid-line: the next call throws ENOSPC); a failed append
 * is cut back to the file's size before it, so the next line never lands on a torn one. When even
 * that cut fails, the file is remembered and its next append cuts it first (or fails, appending
 * nothing). What a crash leaves torn is cut at the next start (`readLogTail`).
 */
export class WholeAppends {
  /** File → the size it must be cut back to before anything more is appended to it. */
  readonly #cutBackTo = new Map<string, number>();

  /**
   * Appends `data` to `file` through `descriptor` and returns the file's size before it. Throws
   * STORE_WRITE_FAILED (its `cause` the file system's error, with the errno `code`) and leaves the
   * file as it was.
   */
  append(file: string, descriptor: number, data: Buffer): number {
    this.#repair(file, descriptor);
    let size: number;
    try {
      size = fstatSync(descriptor).size;
    } catch (error) {
      throw storeWriteFailed(file, error);
    }
    try {
      writeWhole(descriptor, data);
    } catch (error) {
      this.cutBack(file, descriptor, size);
      throw storeWriteFailed(file, error);
    }
    return size;
  }

  /**
   * Cuts `file` back to `size` (an append the caller takes back). Never throws: a cut that fails is
   * made before the file's next append.
   */
  cutBack(file: string, descriptor: number, size: number): void {
    try {
      ftruncateSync(descriptor, size);
    } catch {
      this.markTorn(file, size);
    }
  }

  /** Remembers that `file` must be cut back to `size` before its next append. */
  markTorn(file: string, size: number): void {
    const earlier = this.#cutBackTo.get(file);
    this.#cutBackTo.set(file, earlier === undefined ? size : Math.min(earlier, size));
  }

  /** Whether `file` still has a torn end to cut before its next append. */
  isTorn(file: string): boolean {
    return this.#cutBackTo.has(file);
  }

  #repair(file: string, descriptor: number): void {
    const size = this.#cutBackTo.get(file);
    if (size === undefined) return;
    try {
      // Never lengthen: a file replaced meanwhile may be shorter than the size remembered.
      if (fstatSync(descriptor).size > size) ftruncateSync(descriptor, size);
    } catch (error) {
      throw storeWriteFailed(file, error, "could not cut off the torn end of an earlier failed write");
    }
    this.#cutBackTo.delete(file);
  }
}

/** Writes every byte of `data`: a short write is followed by the rest, which throws when it cannot. */
function writeWhole(descriptor: number, data: Buffer): void {
  for (let written = 0; written < data.length;) {
    const count = writeSync(descriptor, data, written);
    if (count <= 0) throw Object.assign(new Error("the write made no progress"), { code: "EIO" });
    written += count;
  }
}

/** The error of an append that did not land: the errno error stays its `cause`. */
export function storeWriteFailed(
  file: string,
  cause: unknown,
  message = `could not append to ${file}`,
): AgentdError {
  const code = errnoCodeOf(cause);
  return new AgentdError("STORE_WRITE_FAILED", code === undefined ? message : `${message} (${code})`, {
    file,
    hint: "check that data_dir is writable and the disk is not full",
    ...(code === undefined ? {} : { details: { errno: code } }),
    cause,
  });
}
