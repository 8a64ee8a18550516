import type { Clock } from "../clock/clock.js";

/** How often a watch trigger whose folder went looks whether it is back: one `stat` each time. */
export const FOLDER_RETURN_CHECK_MILLISECONDS = 5_000;

/**
 * Looks on the daemon's clock, every FOLDER_RETURN_CHECK_MILLISECONDS, for a watched folder that
 * was removed or renamed to be back (`find` answers its real path, or undefined while it is not),
 * and calls `back` with it once. A tool that rotates a folder (`mv inbox inbox.1 && mkdir inbox`)
 * must not leave its trigger deaf until the daemon restarts. Returns the function that stops looking.
 */
export function awaitFolderReturn(
  clock: Clock,
  find: () => string | undefined,
  back: (folder: string) => void,
): () => void {
  let cancel: () => void = () => {};
  let stopped = false;
  const look = (): void => {
    cancel = clock.setTimer(() => {
      if (stopped) return;
      const folder = find();
      if (folder === undefined) look();
      else back(folder);
    }, FOLDER_RETURN_CHECK_MILLISECONDS);
  };
  look();
  return () => {
    stopped = true;
    cancel();
  };
}
