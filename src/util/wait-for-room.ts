import type { StorageGate } from "./storage-gate.js";

/**
 * Waits until the store can write again after `failure` (a write refused for lack of room, told to
 * `storage` already). Rejects with `failure` when the store closes while still full, and with the
 * signal's reason once `signal` aborts (a stopped run's write must not land later).
 */
export function waitForRoom(storage: StorageGate, failure: unknown, signal?: AbortSignal): Promise<void> {
  if (signal?.aborted) return Promise.reject(signal.reason);
  return new Promise<void>((resolve, reject) => {
    const onAbort = () => reject(signal?.reason);
    signal?.addEventListener("abort", onAbort, { once: true });
    storage
      .whenWritable()
      .then(resolve, () => reject(failure))
      .finally(() => signal?.removeEventListener("abort", onAbort));
  });
}
