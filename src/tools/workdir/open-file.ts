import { closeSync, read, readSync } from "node:fs";

/**
 * What the file tools use of a file they opened: its descriptor (for fstat and its real path),
 * positioned reads, and closing it. A `FileHandle` is one; so is a DescriptorFile.
 */
export interface OpenFile {
  readonly fd: number;
  read(buffer: Buffer, offset: number, length: number, position: number): Promise<{ bytesRead: number }>;
  close(): Promise<void>;
}

/**
 * Bytes read at once, on the event loop, like the open before them: a small file's first read
 * (readFileStart asks for 8 KiB at least) is a copy from the page cache of a few microseconds, or
 * one disk access as the open's own lookup is, where a trip through libuv's threads cost 30-45 µs
 * of CPU (a thread woken, its answer polled, a promise settled) every read_file call.
 */
const READ_AT_ONCE_BYTES = 16_384;

/**
 * An OpenFile over a bare descriptor opened for reading: reads of more than READ_AT_ONCE_BYTES go
 * through libuv's threads as a `FileHandle`'s do, at a fraction of its cost per call (no object
 * with its own promise machinery per file: a `read_file` call is one open, one read and one
 * close); smaller ones are made at once. The close is synchronous, as
 * the open is: a descriptor opened only for reading has nothing to flush, so its close is one
 * system call that cannot wait on the disk, where a trip through libuv's threads cost several
 * times that every call. Close it once done: unlike a `FileHandle`, nothing closes a forgotten one.
 */
export class DescriptorFile implements OpenFile {
  readonly fd: number;
  #closed = false;

  constructor(descriptor: number) {
    this.fd = descriptor;
  }

  read(buffer: Buffer, offset: number, length: number, position: number): Promise<{ bytesRead: number }> {
    if (length <= READ_AT_ONCE_BYTES) {
      try {
        return Promise.resolve({ bytesRead: readSync(this.fd, buffer, offset, length, position) });
      } catch (error) {
        return Promise.reject(error as Error);
      }
    }
    return new Promise((resolve, reject) => {
      read(this.fd, buffer, offset, length, position, (error, bytesRead) => {
        if (error) reject(error);
        else resolve({ bytesRead });
      });
    });
  }

  /** Closes the descriptor; a second call does nothing (the number may belong to another file by then). */
  close(): Promise<void> {
    if (this.#closed) return Promise.resolve();
    this.#closed = true;
    try {
      closeSync(this.fd);
      return Promise.resolve();
    } catch (error) {
      return Promise.reject(error as Error);
    }
  }
}
