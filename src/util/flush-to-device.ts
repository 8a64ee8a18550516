import { open } from "node:fs/promises";

/**
 * Flushes a file to the device in the background: power-loss durability for a file already safe
 * from kill -9, without blocking the event loop on an fsync. A failure goes to `onError`.
 */
export function flushToDeviceLater(file: string, onError: (error: unknown) => void): void {
  const flush = async () => {
    const handle = await open(file, "r");
    try {
      await handle.datasync();
    } finally {
      await handle.close();
    }
  };
  flush().catch(onError);
}
