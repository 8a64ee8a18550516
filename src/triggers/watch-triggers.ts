import { createHash } from "node:crypto";
import { lstatSync } from "node:fs";
import path from "node:path";
import { type FSWatcher, watch } from "chokidar";
import picomatch from "picomatch";
import type { Clock } from "../clock/clock.js";
import type { AgentDefinition } from "../definitions/agent-definition.js";
import type { Logger } from "../logging/logger.js";
import type { SandboxPolicy } from "../sandbox/sandbox-policy.js";
import { oneLinePath } from "../util/one-line-path.js";
import { fileAccessOf } from "../tools/workdir/file-access.js";
import { awaitFolderReturn } from "./folder-return.js";
import { renderTaskTemplate } from "./task-template.js";
import type { TriggerRateLimit } from "./delivery-rate-limit.js";
import type { TriggerHealth } from "./trigger-health.js";
import type { TriggerRuns } from "./trigger-runs.js";
import type { ArmedTrigger } from "./trigger-set.js";
import type { WatchTriggerSettings } from "./trigger-schema.js";
import { MAX_WATCHED_ENTRIES, WatchEntryBound } from "./watch-entry-bound.js";
import { existingFolder, isFolder, signatureOf, spelledFolder } from "./watched-folder.js";

/** Paths named in one run's task at most; the rest are counted. */
const MAX_LISTED_PATHS = 200;
/** Folders below the watched one that are watched at most. */
const MAX_DEPTH = 32;
/**
 * How long a watch trigger whose watcher met the system's limit of watched files waits before it
 * watches its folder again (and again, while the limit is still reached).
 */
export const WATCH_LIMIT_RETRY_MILLISECONDS = 5_000;
/**
 * What the kernel answers a watch it has no room for: ENOSPC past `fs.inotify.max_user_watches`,
 * EMFILE past `fs.inotify.max_user_instances`. Both are counted per user, and a sandboxed command
 * runs as the daemon's user: it can use them up.
 */
const WATCH_LIMIT_CODES = new Set(["ENOSPC", "EMFILE"]);

export interface WatchTriggersOptions {
  runs: TriggerRuns;
  sandboxOf: (definition: AgentDefinition) => SandboxPolicy;
  clock: Clock;
  logger: Logger;
  health: TriggerHealth;
  /** Where starts are counted against each trigger's `rate_limit`: this daemon, or the cluster. */
  rateLimit: TriggerRateLimit;
  /** Entries one trigger watches at most (default MAX_WATCHED_ENTRIES; tests lower it). */
  maxEntries?: number;
  /** How a folder is watched (default chokidar's `watch`; a test passes one that fails as the kernel does). */
  watchFolder?: typeof watch;
}

/** One watched folder, its pending paths and the debounce timer. */
interface Watching {
  signature: string;
  folder: string;
  watcher: FSWatcher;
  pending: Set<string>;
  cancelTimer: (() => void) | undefined;
  /** Closed (the trigger went or changed): a start still being counted is not made. */
  stopped: boolean;
  /** Ends the wait for the watcher's first scan when it is closed before (chokidar then never tells). */
  stopWaiting: () => void;
  /** The first scan is done: changes from now on are seen. */
  ready: boolean;
}

/**
 * `watch` triggers: a folder watched with chokidar, and once files matching the glob were added or
 * changed and then nothing more happened for `debounce` (on the daemon's clock), one run starts
 * with those paths (relative to the folder) in its task. The folder (relative paths are read from
 * the agent's workdir) must be one the agent's sandbox lets it read; symlinks are never followed,
 * and a path its sandbox hides never reaches a task. Watchers follow the definitions: kept while
 * a trigger stays as it was, closed when it goes. Starts count against the trigger's `rate_limit`:
 * past it, the changes wait, and one run takes them all once the window allows.
 */
export class WatchTriggers {
  readonly #options: WatchTriggersOptions;
  readonly #watching = new Map<string, Watching>();
  /** Triggers whose folder was removed or renamed: what stops looking for its return, and the agent's hash. */
  readonly #gone = new Map<string, { stopLooking: () => void; hash: string }>();
  /** Triggers whose watcher met the system's limit of watches: what cancels the next try, and its signature. */
  readonly #retrying = new Map<string, { cancel: () => void; signature: string }>();
  /** The triggers of the last apply(), by key: their agent definition's hash. */
  #current = new Map<string, string>();

  constructor(options: WatchTriggersOptions) {
    this.#options = options;
  }

  /** Watches what `triggers` name, stops watching the rest; resolves once every new watcher is ready. */
  async apply(triggers: ReadonlyArray<ArmedTrigger<WatchTriggerSettings>>): Promise<void> {
    const wanted = new Map<
      string,
      { trigger: ArmedTrigger<WatchTriggerSettings>; folder: string; signature: string }
    >();
    for (const trigger of triggers) {
      const folder = this.#folderOf(trigger);
      if (folder === undefined) continue;
      wanted.set(`${trigger.definition.id}/${trigger.name}`, {
        trigger,
        folder,
        signature: signatureOf(trigger, folder),
      });
    }
    // A folder that went and is still away stays looked for while its trigger stays as it was.
    const hashes = new Map(
      triggers.map((trigger) => [`${trigger.definition.id}/${trigger.name}`, trigger.definition.hash]),
    );
    this.#current = hashes;
    const returned = new Set<string>();
    for (const [key, gone] of this.#gone) {
      if (hashes.get(key) === gone.hash && !wanted.has(key)) continue;
      if (wanted.has(key)) returned.add(key);
      gone.stopLooking();
      this.#gone.delete(key);
    }
    // Paths still waiting (for the debounce, or past the rate limit) in a watcher replaced because
    // its trigger or agent changed: the new one watching the same folder takes them over.
    const waiting = new Map<string, ReadonlySet<string>>();
    for (const [key, watching] of this.#watching) {
      if (wanted.get(key)?.signature === watching.signature) continue;
      this.#watching.delete(key);
      await this.#stop(watching);
      if (wanted.get(key)?.folder === watching.folder) waiting.set(key, watching.pending);
    }
    // A watcher waiting to try again after the system's limit keeps waiting while its trigger stays.
    for (const [key, retry] of this.#retrying) {
      if (wanted.get(key)?.signature === retry.signature) continue;
      retry.cancel();
      this.#retrying.delete(key);
    }
    const starting: Array<Promise<void>> = [];
    for (const [key, { trigger, folder, signature }] of wanted) {
      if (this.#watching.has(key) || this.#retrying.has(key)) continue;
      starting.push(
        this.#watch(key, trigger, folder, signature, waiting.get(key) ?? new Set(), returned.has(key)),
      );
    }
    await Promise.all(starting);
  }

  /**
   * Whether the trigger `<agent>/<name>` has its folder watched here now: its watcher's first scan
   * done (not while the folder is gone, nor while the system's limit of watches keeps it waiting).
   */
  watches(key: string): boolean {
    return this.#watching.get(key)?.ready === true;
  }

  /** Paths seen changed and waiting for their debounce, over every watched folder. */
  pendingPaths(): number {
    let count = 0;
    for (const watching of this.#watching.values()) count += watching.pending.size;
    return count;
  }

  async close(): Promise<void> {
    for (const gone of this.#gone.values()) gone.stopLooking();
    this.#gone.clear();
    for (const retry of this.#retrying.values()) retry.cancel();
    this.#retrying.clear();
    const all = [...this.#watching.values()];
    this.#watching.clear();
    await Promise.all(all.map((watching) => this.#stop(watching)));
  }

  /** The real folder to watch, or undefined (logged) when it is missing or hidden from the agent. */
  #folderOf(trigger: ArmedTrigger<WatchTriggerSettings>): string | undefined {
    const { definition, name } = trigger;
    const folder = existingFolder(trigger);
    if (folder === undefined) {
      this.#options.logger.warn(
        { agent: definition.id, trigger: name, folder: spelledFolder(trigger) },
        "a watch trigger's folder does not exist: not watched",
      );
      return undefined;
    }
    if (this.#accessOf(definition)(folder) === "hidden") {
      this.#options.logger.warn(
        { agent: definition.id, trigger: name, folder },
        "a watch trigger's folder is hidden from the agent by its sandbox: not watched",
      );
      return undefined;
    }
    return folder;
  }

  /** What the agent's sandbox shows of a path; everything hidden when its policy cannot be made. */
  #accessOf(definition: AgentDefinition): (realPath: string) => "hidden" | "read-only" | "writable" {
    try {
      return fileAccessOf(this.#options.sandboxOf(definition));
    } catch (error) {
      this.#options.logger.warn(
        { err: error, agent: definition.id },
        "no sandbox policy for a watch trigger",
      );
      return () => "hidden";
    }
  }

  async #watch(
    key: string,
    trigger: ArmedTrigger<WatchTriggerSettings>,
    folder: string,
    signature: string,
    waiting: ReadonlySet<string>,
    /** The folder came back: what it holds now was added since it went, and counts as changed. */
    returned = false,
  ): Promise<void> {
    const { definition, name } = trigger;
    const access = this.#accessOf(definition);
    const matches = picomatch(trigger.settings.watch.glob, { dot: true });
    const maxEntries = this.#options.maxEntries ?? MAX_WATCHED_ENTRIES;
    const bound = new WatchEntryBound(maxEntries);
    const overflow = (): void => {
      const reason = `the folder holds more than ${maxEntries} entries: new ones are not watched until some are removed`;
      this.#options.health.record(definition.id, name, "failed", reason);
      this.#options.logger.warn(
        { agent: definition.id, trigger: name, folder },
        `a watch trigger's ${reason}`,
      );
    };
    const watcher = (this.#options.watchFolder ?? watch)(folder, {
      ignoreInitial: !returned,
      followSymlinks: false,
      depth: MAX_DEPTH,
      ignorePermissionErrors: true,
      ignored: (file: string) =>
        file !== folder && (access(file) === "hidden" || !bound.admit(file, overflow)),
    });
    const watching: Watching = {
      signature,
      folder,
      watcher,
      pending: new Set(),
      cancelTimer: undefined,
      stopped: false,
      stopWaiting: () => undefined,
      ready: false,
    };
    const closedFirst = new Promise<void>((resolve) => (watching.stopWaiting = resolve));
    this.#watching.set(key, watching);
    watcher.on("all", (event, file) => {
      const relative = path.relative(folder, file);
      if (event === "unlinkDir" && file === folder) {
        void this.#lose(key, watching, trigger);
        return;
      }
      if (event === "unlink" || event === "unlinkDir") {
        bound.forget(file);
        // Nothing left to read: a name waiting past the rate limit must not outlive its file, or
        // files made and removed during the window would each keep one (memory without bound).
        watching.pending.delete(relative);
      }
      if (event !== "add" && event !== "change") return;
      if (
        relative.startsWith("..") ||
        path.isAbsolute(relative) ||
        !matches(relative.split(path.sep).join("/"))
      )
        return;
      if (isSymlink(file)) return;
      watching.pending.add(relative);
      watching.cancelTimer?.();
      watching.cancelTimer = this.#options.clock.setTimer(
        () => this.#fire(watching, trigger, folder),
        trigger.settings.watch.debounce,
      );
    });
    // The folder itself renamed or removed: the system's watch reports it under the folder's own
    // name (chokidar tells `unlinkDir` only when the folder held something).
    watcher.on("raw", (event, filename) => {
      if (event === "rename" && filename === path.basename(folder) && !isFolder(folder)) {
        void this.#lose(key, watching, trigger);
      }
    });
    watcher.on("error", (error) => {
      // The folder itself could not be watched: the watcher sees nothing. (A file or a folder below
      // that could not be is missed alone, as before: the rest is still seen.)
      const { code, path: failed } = error as NodeJS.ErrnoException;
      if (WATCH_LIMIT_CODES.has(code ?? "") && failed !== undefined && path.resolve(failed) === folder) {
        void this.#watchAgainLater(key, watching, trigger, code ?? "");
        return;
      }
      this.#options.logger.warn(
        { err: error, agent: definition.id, trigger: name },
        "a watch trigger's watcher failed",
      );
    });
    for (const relative of waiting) {
      // As a change seen now would be: matching the glob, and not hidden by the sandbox as it is now.
      if (!matches(relative.split(path.sep).join("/"))) continue;
      if (access(path.join(folder, relative)) !== "hidden") watching.pending.add(relative);
    }
    await Promise.race([new Promise<void>((resolve) => watcher.once("ready", () => resolve())), closedFirst]);
    // Given up while it scanned (the system's limit met: its paths wait for the next watcher).
    if (watching.stopped) return;
    watching.ready = true;
    if (watching.pending.size > 0 && watching.cancelTimer === undefined && !watching.stopped) {
      watching.cancelTimer = this.#options.clock.setTimer(
        () => this.#fire(watching, trigger, folder),
        trigger.settings.watch.debounce,
      );
    }
    this.#options.logger.info({ agent: definition.id, trigger: name, folder }, "watch trigger ready");
  }

  /**
   * The watched folder itself was removed or renamed (chokidar stops there): said in the trigger's
   * health and the log, and the folder is looked for until it is back at its path, then watched
   * again. Paths waiting for a run went with it.
   */
  async #lose(key: string, watching: Watching, trigger: ArmedTrigger<WatchTriggerSettings>): Promise<void> {
    if (this.#watching.get(key) !== watching) return;
    // The bookkeeping first, in this turn: an apply() running meanwhile sees the trigger as gone.
    this.#watching.delete(key);
    const { definition, name } = trigger;
    const spelled = spelledFolder(trigger);
    const reason = `the folder ${spelled} was removed or renamed: it is watched again once it is back`;
    this.#options.health.record(definition.id, name, "failed", reason);
    this.#options.logger.warn(
      { agent: definition.id, trigger: name, folder: spelled },
      `a watch trigger's ${reason}`,
    );
    const stopLooking = awaitFolderReturn(
      this.#options.clock,
      () => {
        const folder = existingFolder(trigger);
        return folder !== undefined && this.#accessOf(definition)(folder) !== "hidden" ? folder : undefined;
      },
      (folder) => {
        this.#gone.delete(key);
        // Gone or changed since (an apply() that ran while this one was being lost): not watched.
        if (this.#watching.has(key) || this.#current.get(key) !== definition.hash) return;
        void this.#watch(key, trigger, folder, signatureOf(trigger, folder), new Set(), true);
      },
    );
    this.#gone.set(key, { stopLooking, hash: definition.hash });
    await this.#stop(watching);
  }

  /**
   * The watcher could not watch its folder for the system's limit of watches (a sandboxed command
   * of any agent can use it up: it is counted per user): it would miss every change there, for the
   * daemon's whole life. Said in the trigger's health and the log; the folder is watched again
   * after WATCH_LIMIT_RETRY_MILLISECONDS, with the paths still waiting, and so on while the limit
   * is still reached. Changes made in between are missed.
   */
  async #watchAgainLater(
    key: string,
    watching: Watching,
    trigger: ArmedTrigger<WatchTriggerSettings>,
    code: string,
  ): Promise<void> {
    if (this.#watching.get(key) !== watching) return;
    this.#watching.delete(key);
    const { definition, name } = trigger;
    const limit = code === "EMFILE" ? "fs.inotify.max_user_instances" : "fs.inotify.max_user_watches";
    const reason =
      `the system's limit of watched files (${limit}, counted per user: ${code}) was reached: ` +
      `the folder is watched again in ${WATCH_LIMIT_RETRY_MILLISECONDS / 1_000} s, changes until then are missed`;
    this.#options.health.record(definition.id, name, "failed", reason);
    this.#options.logger.warn(
      { agent: definition.id, trigger: name, folder: watching.folder },
      `a watch trigger's ${reason}`,
    );
    const cancel = this.#options.clock.setTimer(() => {
      this.#retrying.delete(key);
      // Gone or changed since: not watched again here.
      if (this.#watching.has(key) || this.#current.get(key) !== definition.hash) return;
      void this.#watch(key, trigger, watching.folder, watching.signature, watching.pending, false);
    }, WATCH_LIMIT_RETRY_MILLISECONDS);
    this.#retrying.set(key, { cancel, signature: watching.signature });
    await this.#stop(watching);
  }

  #fire(watching: Watching, trigger: ArmedTrigger<WatchTriggerSettings>, folder: string): void {
    watching.cancelTimer = undefined;
    if (watching.pending.size === 0) return;
    const { definition, name, settings } = trigger;
    const limitKey = `${definition.id}/${name}`;
    const { rateLimit, health, logger } = this.#options;
    rateLimit.take(limitKey, settings.rate_limit).then(
      (verdict) => {
        if (watching.stopped) {
          if (verdict.allowed) void rateLimit.giveBack(limitKey, verdict.start);
          return;
        }
        if (!verdict.allowed) {
          this.#waitForWindow(watching, trigger, folder, verdict.retryAfterSeconds);
          return;
        }
        this.#start(watching, trigger, folder, verdict.start);
      },
      (error: unknown) => {
        // The count could not be read (a cluster's store away): the changes wait for the next try.
        health.record(definition.id, name, "failed", error instanceof Error ? error.message : String(error));
        logger.warn(
          { err: error, agent: definition.id, trigger: name },
          "a watch trigger could not count its start",
        );
        this.#retry(watching, trigger, folder, settings.watch.debounce);
      },
    );
  }

  /** Past the rate limit: the changes wait (later ones join them) until the window allows a start. */
  #waitForWindow(
    watching: Watching,
    trigger: ArmedTrigger<WatchTriggerSettings>,
    folder: string,
    retryAfterSeconds: number,
  ): void {
    const { definition, name, settings } = trigger;
    const { runs, per } = settings.rate_limit;
    const reason = `started ${runs} runs within ${per / 1_000} s (rate_limit of the trigger): ${watching.pending.size} changed paths wait ${retryAfterSeconds} s`;
    this.#options.health.record(definition.id, name, "rate_limited", reason);
    this.#options.logger.warn({ agent: definition.id, trigger: name }, `a watch trigger ${reason}`);
    this.#retry(watching, trigger, folder, retryAfterSeconds * 1_000);
  }

  /** Fires again after `milliseconds`, unless a new change already set the debounce's timer. */
  #retry(
    watching: Watching,
    trigger: ArmedTrigger<WatchTriggerSettings>,
    folder: string,
    milliseconds: number,
  ): void {
    if (watching.stopped || watching.cancelTimer !== undefined) return;
    watching.cancelTimer = this.#options.clock.setTimer(
      () => this.#fire(watching, trigger, folder),
      milliseconds,
    );
  }

  #start(
    watching: Watching,
    trigger: ArmedTrigger<WatchTriggerSettings>,
    folder: string,
    start: string,
  ): void {
    const { definition, name, settings } = trigger;
    const limitKey = `${definition.id}/${name}`;
    const { rateLimit } = this.#options;
    // Another count answered first (a change fired the debounce while this one was being
    // counted) and its run took every path: no run without paths, and the start goes back.
    if (watching.pending.size === 0) {
      void rateLimit.giveBack(limitKey, start);
      return;
    }
    const paths = [...watching.pending].sort();
    watching.pending.clear();
    const listed = paths.slice(0, MAX_LISTED_PATHS).map(oneLinePath).join("\n");
    const more = paths.length > MAX_LISTED_PATHS ? `\n… and ${paths.length - MAX_LISTED_PATHS} more` : "";
    const task = renderTaskTemplate(settings.task ?? defaultTask(definition.frontmatter.task), (variable) => {
      if (variable === "paths") return `${listed}${more}`;
      if (variable === "folder") return folder;
      if (variable === "trigger") return name;
      return undefined;
    });
    this.#options.runs
      .startOnce(definition.id, task, { kind: "watch", name }, changeKey(name, folder, paths))
      .then((started) => {
        // Another node of the cluster started the run for this same change: not this node's start.
        if (started.duplicate) void rateLimit.giveBack(limitKey, start);
        this.#options.health.record(definition.id, name, started.duplicate ? "duplicate" : "accepted");
        this.#options.logger.info(
          { agent: definition.id, trigger: name, run: started.run.id, paths: paths.length },
          started.duplicate ? "another node started this change's run" : "a watch trigger started a run",
        );
      })
      .catch((error: unknown) => {
        void rateLimit.giveBack(limitKey, start);
        this.#options.health.record(
          definition.id,
          name,
          "failed",
          error instanceof Error ? error.message : String(error),
        );
        this.#options.logger.warn(
          { err: error, agent: definition.id, trigger: name },
          "a watch trigger could not start its run",
        );
      });
  }

  async #stop(watching: Watching): Promise<void> {
    watching.stopped = true;
    watching.stopWaiting();
    watching.cancelTimer?.();
    await watching.watcher.close();
  }
}

/**
 * The Idempotency-Key of one change: the trigger, and each path with its size, modification time
 * and change time. Every node of a cluster watching one shared folder sees the same change and
 * makes the same key, so the run starts once across the cluster (the key's unique index decides); a
 * later change of the same file has another time, so another key. The change time (the inode's,
 * which no program can set back) tells apart a file put in again with its modification time kept
 * (`mv`, `tar x`, `rsync -a`, `cp -p`): the same name, size and mtime within 24 h is a new change.
 */
function changeKey(name: string, folder: string, paths: readonly string[]): string {
  const digest = createHash("sha256");
  for (const relative of paths) {
    let stamp = "gone";
    try {
      const stats = lstatSync(path.join(folder, relative));
      stamp = `${stats.size}:${stats.mtimeMs}:${stats.ctimeMs}`;
    } catch {
      // Removed since: its name alone is in the key.
    }
    digest.update(`${relative}\u0000${stamp}\u0000`);
  }
  return `watch:${name}:${digest.digest("hex")}`;
}

function isSymlink(file: string): boolean {
  try {
    return lstatSync(file).isSymbolicLink();
  } catch {
    return true;
  }
}

function defaultTask(own: string | undefined): string {
  const line = "These files were added or changed in {{folder}}:\n\n{{paths}}";
  return own === undefined ? line : `${own}\n\n${line}`;
}
