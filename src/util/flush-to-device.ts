import { open } from "node:fs/promises";

/** Files waiting for their flush; a file asked for twice before its turn is flushed once. */
const pending = new Map<string, (error: unknown) => void>();
/** The flushes under way, until the queue is empty. */
let flushing: Promise<void> | undefined;

/**
 * Flushes a file to the device in the background: power-loss durability for a file already safe
 * from kill -9, without blocking the event loop on an fsync. Flushes run one at a time and a file
 * queued again before its turn is flushed once (200 runs of one agent ending together flush its
 * log once, not 200 times). A failure goes to `onError`.
 */
export function flushToDeviceLater(file: string, onError: (error: unknown) => void): void {
  pending.set(file, onError);
  flushing ??= flushPending();
}

/**
 * Resolves once every flush asked for so far is done (a store closing: a daemon that says it
 * stopped has its finished runs on the device, and leaves no fsync behind to slow what comes next).
 */
export function flushesSettled(): Promise<void> {
  return flushing ?? Promise.resolve();
}

async function flushPending(): Promise<void> {
  try {
    for (let next = pending.entries().next(); !next.done; next = pending.entries().next()) {
      const [file, onError] = next.value;
      pending.delete(file);
      await flush(file).catch(onError);
    }
  } finally {
    flushing = undefined;
  }
}

async function flush(file: string): Promise<void> {
  const handle = await open(file, "r");
  try {
    await handle.datasync();
  } finally {
    await handle.close();
  }
}
