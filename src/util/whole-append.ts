import { fstatSync, ftruncateSync, writeSync } from "node:fs";
import { AgentdError } from "../errors/agentd-error.js";
import { errnoCodeOf } from "./errno-code.js";

/** Where a torn end starts: at a known size, or, when even the size could not be read, so many bytes before the end. */
type TornEnd = { size: number } | { bytes: number };

/**
 * Appends that land whole or not at all, on descriptors opened in append mode. `writeSync` can
 * write part of a buffer (the disk fills up mid-line: the next call throws ENOSPC); what a failed
 * append wrote is cut off again, so the next line never lands on a torn one. When even
 * that cut fails, the file is remembered and its next append cuts it first (or fails, appending
 * nothing). What a crash leaves torn is cut at the next start (`readLogTail`).
 */
export class WholeAppends {
  /** File → the torn end to cut off before anything more is appended to it. */
  readonly #torn = new Map<string, TornEnd>();

  /**
   * Appends `data` to `file` through `descriptor`. Throws STORE_WRITE_FAILED (its `cause` the file
   * system's error, with the errno `code`) and leaves the file as it was. No `fstat` before the
   * write: the file's size only matters when a write fails part-way, and is read then.
   */
  append(file: string, descriptor: number, data: Buffer): void {
    this.#repair(file, descriptor);
    // A short write is followed by the rest, which throws when it cannot.
    let landed = 0;
    try {
      while (landed < data.length) {
        const count = writeSync(descriptor, data, landed);
        if (count <= 0) throw Object.assign(new Error("the write made no progress"), { code: "EIO" });
        landed += count;
      }
    } catch (error) {
      // Nothing landed: the file is as it was, nothing to cut.
      if (landed > 0) this.cutBackBy(file, descriptor, landed);
      throw storeWriteFailed(file, error);
    }
  }

  /**
   * Cuts the last `bytes` off `file` (an append the caller takes back; nothing was appended after
   * it). Never throws: a cut that fails is made before the file's next append.
   */
  cutBackBy(file: string, descriptor: number, bytes: number): void {
    let size: number;
    try {
      size = Math.max(0, fstatSync(descriptor).size - bytes);
    } catch {
      return this.markTorn(file, bytes);
    }
    try {
      ftruncateSync(descriptor, size);
    } catch {
      this.#mark(file, { size });
    }
  }

  /** Remembers that the last `bytes` of `file` must be cut off before its next append. */
  markTorn(file: string, bytes: number): void {
    const earlier = this.#torn.get(file);
    this.#torn.set(
      file,
      earlier && "bytes" in earlier ? { bytes: earlier.bytes + bytes } : (earlier ?? { bytes }),
    );
  }

  /** Whether `file` still has a torn end to cut before its next append. */
  isTorn(file: string): boolean {
    return this.#torn.has(file);
  }

  #mark(file: string, end: { size: number }): void {
    const earlier = this.#torn.get(file);
    this.#torn.set(file, earlier && "size" in earlier && earlier.size < end.size ? earlier : end);
  }

  #repair(file: string, descriptor: number): void {
    const torn = this.#torn.get(file);
    if (torn === undefined) return;
    try {
      const size = fstatSync(descriptor).size;
      // Never lengthen: a file replaced meanwhile may be shorter than the size remembered.
      const cutTo = "size" in torn ? torn.size : Math.max(0, size - torn.bytes);
      if (size > cutTo) ftruncateSync(descriptor, cutTo);
    } catch (error) {
      throw storeWriteFailed(file, error, "could not cut off the torn end of an earlier failed write");
    }
    this.#torn.delete(file);
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
