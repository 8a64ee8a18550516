import { randomFillSync } from "node:crypto";
import type { IdGenerator } from "@opentelemetry/sdk-trace-base";

/** How many random bytes are drawn at a time: 256 span ids, or 128 trace ids. */
const POOL_BYTES = 2_048;
const ZERO_SPAN_ID = "0".repeat(16);
const ZERO_TRACE_ID = "0".repeat(32);

/**
 * Trace and span ids from the operating system's random source (the W3C trace context asks for
 * random ids), drawn into a pool a few kilobytes at a time, turned into hex once per pool and read
 * off it as slices of that string. The SDK's own generator writes Math.random words into a buffer
 * for every id: in a traced daemon that was the largest single part of starting a span; a hex
 * conversion per id (a call into the runtime each) was the next. An all-zero id (invalid) is drawn
 * again.
 */
export class PooledRandomIds implements IdGenerator {
  readonly #pool = Buffer.allocUnsafe(POOL_BYTES);
  /** The pool in hex: two characters a byte. */
  #hexPool = "";
  #offset = POOL_BYTES;

  generateTraceId(): string {
    const id = this.#hex(16);
    return id === ZERO_TRACE_ID ? this.generateTraceId() : id;
  }

  generateSpanId(): string {
    const id = this.#hex(8);
    return id === ZERO_SPAN_ID ? this.generateSpanId() : id;
  }

  #hex(bytes: number): string {
    if (this.#offset + bytes > POOL_BYTES) {
      randomFillSync(this.#pool);
      this.#hexPool = this.#pool.toString("hex");
      this.#offset = 0;
    }
    const start = this.#offset;
    this.#offset = start + bytes;
    return this.#hexPool.slice(start * 2, (start + bytes) * 2);
  }
}
