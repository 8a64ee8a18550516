import type { Command } from "commander";
import { loginUrl } from "../../api/api-token-file.js";
import { loadConfig } from "../../config/load-config.js";
import { secretsOnCommandLines } from "../../secrets/secrets-on-command-lines.js";
import type { Daemon, StartDaemonOptions } from "../../app/daemon.js";
import { listenWhileStarting } from "../../api/starting-server.js";
import { DataDirectoryLock } from "../../locks/data-directory-lock.js";
import { packageVersion } from "../../util/package-version.js";
import { exitWhenIdle, holdSignalsWhileStarting, shutdownOnSignals } from "../../app/shutdown-signals.js";
import { type LoginLine, formatStartupSummary, summarizeStartup } from "../../app/startup-summary.js";
import { describeProbe, probeEndpoint } from "../../llm/probe-endpoint.js";
import { EXIT_FAILURE, type GlobalOptions, printJson, reportFatal } from "../output.js";
import { writeCodeCacheNow } from "../code-cache.js";
import { stopPretenuring } from "../stop-pretenuring.js";
import { closeInheritedDescriptors } from "../../processes/inherited-descriptors.js";

/** How long the start-up look at the model server may take. */
const PROBE_TIMEOUT_MILLISECONDS = 3_000;

/**
 * Says on stderr, right after start, when the model server does not answer or lacks the model,
 * and the one thing to do: a first start without an LLM should not wait for a failed run to tell.
 */
async function warnWhenLlmSilent(
  llm: { endpoint: string; model: string },
  apiKey: string | undefined,
): Promise<void> {
  const probe = await probeEndpoint({
    ...llm,
    apiKey,
    signal: AbortSignal.timeout(PROBE_TIMEOUT_MILLISECONDS),
  });
  const warning = describeProbe(probe);
  if (warning !== undefined) process.stderr.write(`warning: ${warning}\n`);
}

/** How long a stopped daemon may take to end by itself before it says what keeps it running. */
const EXIT_REPORT_AFTER_MILLISECONDS = 5_000;

/** Logs the kinds of handles that keep a stopped daemon's process alive; never keeps it alive itself. */
function reportWhatKeepsRunning(daemon: Daemon): void {
  const timer = setTimeout(() => {
    daemon.logger.warn(
      { handles: process.getActiveResourcesInfo().filter((kind) => kind !== "Timeout") },
      "the daemon has stopped but something still keeps its process running",
    );
    daemon.logger.flush();
  }, EXIT_REPORT_AFTER_MILLISECONDS);
  timer.unref();
}

/**
 * Takes the data folder's lock (a second daemon on the folder stops here, before binding its
 * port), then listens: `/health` answers "starting" while the daemon loads and reads its agents.
 */
async function listenEarly(
  config: StartDaemonOptions["config"],
  version: string,
): Promise<NonNullable<StartDaemonOptions["starting"]>> {
  const startedAt = new Date();
  const lock = DataDirectoryLock.acquire(config.data_dir, { command: "start" });
  try {
    const server = await listenWhileStarting({
      host: config.server.host,
      port: config.server.port,
      allowedHosts: config.server.allowed_hosts,
      version,
      startedAt,
    });
    return { lock, server, startedAt };
  } catch (error) {
    lock.release();
    throw error;
  }
}

/**
 * The summary's login line. The URL carries the API token, so it is printed only to an interactive
 * terminal (stdin and stderr both one: a person typed the command); a journal, `docker logs`, a
 * log file or a terminal nobody types in (`docker run -t`) gets the command that prints it.
 */
function loginLine(daemon: Daemon, configFile: string | undefined): LoginLine {
  if (daemon.token === undefined) return { kind: "auth-off" };
  if (process.stderr.isTTY && process.stdin.isTTY) {
    return { kind: "url", url: loginUrl(daemon.url, daemon.token) };
  }
  // The file's absolute path: the command works from any folder.
  const config = configFile === undefined ? "" : ` --config ${shellWord(configFile)}`;
  return { kind: "hint", command: `agentd token --url${config}` };
}

/** `text` as one shell word: as it is when it is plain, else single-quoted. */
function shellWord(text: string): string {
  return /^[\w@%+=:,./-]+$/.test(text) ? text : `'${text.replaceAll("'", `'\\''`)}'`;
}

/**
 * `agentd start`: runs the daemon until SIGTERM/SIGINT. When it is ready it prints a summary on
 * stderr (with the browser login URL on a terminal, else how to get it) and one JSON line on stdout,
 * `{"event":"listening","url":…,"pid":…,"token_file":…}`, which scripts wait for; `token_file` is
 * there when the token came from `<data_dir>/api.token`.
 */
export function registerStartCommand(program: Command): void {
  program
    .command("start")
    .description("run the daemon: schedules, runs, and the HTTP API, until SIGTERM or SIGINT")
    .action(async (_options: unknown, command: Command) => {
      // Before any child exists: what the daemon inherited must not reach the sandboxes.
      closeInheritedDescriptors();
      // A stop asked for while starting is kept for when the daemon is up (lock released, exit 0).
      const signalsWhileStarting = holdSignalsWhileStarting();
      const globals = command.optsWithGlobals<GlobalOptions>();
      const loaded = loadConfig({ file: globals.config });
      const warnings = [...loaded.warnings, ...secretsOnCommandLines(loaded.config, loaded.file)];
      for (const warning of warnings) process.stderr.write(`warning: ${warning}\n`);
      let daemon: Daemon;
      try {
        const starting = await listenEarly(loaded.config, packageVersion());
        // The daemon's modules (the HTTP API, runs, tools, workers) load while /health answers.
        const { startDaemon } = await import("../../app/daemon.js");
        daemon = await startDaemon({
          config: loaded.config,
          configFile: loaded.file,
          version: packageVersion(),
          starting,
        });
      } catch (error) {
        signalsWhileStarting.dispose();
        // startDaemon closed what it had started: the process ends by itself.
        reportFatal(error, Boolean(globals.json));
        process.exitCode = EXIT_FAILURE;
        return;
      }
      signalsWhileStarting.dispose();
      const stopRequested = signalsWhileStarting.received;
      const stopped = shutdownOnSignals(() => daemon.shutdown(), daemon.logger, stopRequested);
      if (stopRequested) {
        await stopped;
        reportWhatKeepsRunning(daemon);
        exitWhenIdle();
        return;
      }
      // Before the line a supervisor or a test waits for, and often ends the daemon after with
      // SIGKILL: the compiled code of the start is kept once (when its bundle had no cache).
      writeCodeCacheNow();
      // Up and serving: short connections after long ones must not be born in the old generation.
      stopPretenuring();
      const summary = summarizeStartup(daemon);
      if (!globals.json) process.stderr.write(formatStartupSummary(summary, loginLine(daemon, loaded.file)));
      printJson({
        event: "listening",
        url: daemon.url,
        pid: process.pid,
        ...(daemon.tokenFile === undefined ? {} : { token_file: daemon.tokenFile }),
        ...(globals.json ? summary : {}),
      });
      void warnWhenLlmSilent(summary.llm, daemon.config.llm.api_key);
      await stopped;
      // Everything is closed: the process ends by itself when the event loop is empty. Should a
      // handle still hold it, say which (the daemon still exits at the supervisor's SIGKILL).
      reportWhatKeepsRunning(daemon);
      exitWhenIdle();
    });
}
