import type { Logger } from "../logging/logger.js";

const SIGNALS = ["SIGTERM", "SIGINT"] as const;

/** A SIGTERM or SIGINT that arrived while the daemon was starting, before it could shut down. */
export interface SignalsWhileStarting {
  /** The first signal received so far, if any. */
  readonly received: NodeJS.Signals | undefined;
  /** Stops listening (the daemon's own handlers take over, or the start failed). */
  dispose(): void;
}

/**
 * Listens for SIGTERM and SIGINT from the very start of `agentd start`, before the daemon exists:
 * without a listener Node ends the process at once, leaving the data folder's lock behind and
 * requests unanswered. The signal is remembered and the daemon shuts down as soon as it is up
 * (shutdownOnSignals with `received`). A second signal exits at once (exit code 1).
 */
export function holdSignalsWhileStarting(): SignalsWhileStarting {
  let received: NodeJS.Signals | undefined;
  const onSignal = (signal: NodeJS.Signals) => {
    if (received) process.exit(1);
    received = signal;
    process.stderr.write(`${signal} received while starting: stopping once started\n`);
  };
  for (const signal of SIGNALS) process.on(signal, onSignal);
  return {
    get received() {
      return received;
    },
    dispose: () => {
      for (const signal of SIGNALS) process.off(signal, onSignal);
    },
  };
}

/**
 * Resolves once SIGTERM or SIGINT arrived and `shutdown` finished; with `received` (a signal that
 * came while starting), the shutdown begins at once. A second signal while shutting down forces
 * the process out at once (exit code 1).
 */
export function shutdownOnSignals(
  shutdown: () => Promise<void>,
  logger: Logger,
  received?: NodeJS.Signals,
): Promise<void> {
  return new Promise((resolve, reject) => {
    let first: NodeJS.Signals | undefined;
    const onSignal = (signal: NodeJS.Signals) => {
      if (first) {
        logger.warn({ signal }, "second signal: exiting without waiting for runs");
        logger.flush();
        process.exit(1);
      }
      first = signal;
      logger.info({ signal }, "signal received: shutting down (send it again to force)");
      shutdown().then(resolve, reject);
    };
    for (const signal of SIGNALS) process.on(signal, onSignal);
    if (received) onSignal(received);
  });
}

/**
 * Ends the process as soon as its event loop is empty, skipping Node's tear-down of the heap
 * (freeing every object and compiled function of a daemon took about 0.2 CPU-s, seconds of wall
 * time on a loaded machine, after the last log line). Nothing is lost: `beforeExit` comes only once
 * no write, timer or socket is pending, and the `exit` handlers (the data folder's lock) still run.
 */
export function exitWhenIdle(): void {
  process.once("beforeExit", () => process.exit());
}
