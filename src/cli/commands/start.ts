import type { Command } from "commander";
import { loadConfig } from "../../config/load-config.js";
import { startDaemon } from "../../app/daemon.js";
import { packageVersion } from "../../app/package-version.js";
import { shutdownOnSignals } from "../../app/shutdown-signals.js";
import { formatStartupSummary, summarizeStartup } from "../../app/startup-summary.js";
import { type GlobalOptions, printJson } from "../output.js";

/**
 * `agentd start`: runs the daemon until SIGTERM/SIGINT. When it is ready it prints a summary on
 * stderr and one JSON line on stdout, `{"event":"listening","url":…}`, which scripts wait for.
 */
export function registerStartCommand(program: Command): void {
  program
    .command("start")
    .description("run the daemon: schedules, runs, and the HTTP API, until SIGTERM or SIGINT")
    .action(async (_options: unknown, command: Command) => {
      const globals = command.optsWithGlobals<GlobalOptions>();
      const loaded = loadConfig({ file: globals.config });
      for (const warning of loaded.warnings) process.stderr.write(`warning: ${warning}\n`);
      const daemon = await startDaemon({ config: loaded.config, version: packageVersion() });
      const stopped = shutdownOnSignals(() => daemon.shutdown(), daemon.logger);
      const summary = summarizeStartup(daemon);
      if (!globals.json) process.stderr.write(formatStartupSummary(summary));
      printJson({ event: "listening", url: daemon.url, pid: process.pid, ...(globals.json ? summary : {}) });
      await stopped;
      // Watchers, sockets and timers of other modules must not keep a stopped daemon alive.
      process.exit(0);
    });
}
