import type { Logger } from "../logging/logger.js";

const SIGNALS = ["SIGTERM", "SIGINT"] as const;

/**
 * Resolves once SIGTERM or SIGINT arrived and `shutdown` finished. A second signal while shutting
 * down forces the process out at once (exit code 1).
 */
export function shutdownOnSignals(shutdown: () => Promise<void>, logger: Logger): Promise<void> {
  return new Promise((resolve, reject) => {
    let received: NodeJS.Signals | undefined;
    const onSignal = (signal: NodeJS.Signals) => {
      if (received) {
        logger.warn({ signal }, "second signal: exiting without waiting for runs");
        logger.flush();
        process.exit(1);
      }
      received = signal;
      logger.info({ signal }, "signal received: shutting down (send it again to force)");
      shutdown().then(resolve, reject);
    };
    for (const signal of SIGNALS) process.on(signal, onSignal);
  });
}
