import { existsSync, type Stats } from "node:fs";
import path from "node:path";
import { type FSWatcher, watch } from "chokidar";
import { isWithin } from "../util/path-within.js";
import { isAgentFile, isPresetFile } from "./definition-files.js";

/** How long a file must stay quiet before it is read: one editor save is often several writes. */
export const SETTLE_MILLISECONDS = 25;
/**
 * A deletion waits longer: editors save by renaming the old file away and writing the new one,
 * and the agent must not flicker out of existence in between.
 */
export const DELETE_SETTLE_MILLISECONDS = 120;

export interface DefinitionWatcherOptions {
  agentsDirectories: readonly string[];
  presetsDirectory: string;
  /** Called with files that changed, appeared or disappeared, after they settled. */
  onFiles: (files: string[]) => void;
  /** Called when a folder disappeared: every known file under it is gone. */
  onFolderRemoved: (folder: string) => void;
  onError: (error: unknown) => void;
}

/**
 * Watches the agents folder (recursively) and the presets folder with chokidar. The folders are
 * read once before by the caller, so chokidar's initial scan emits nothing. Each file's burst of
 * events is collapsed into one notification.
 */
export class DefinitionWatcher {
  private readonly timers = new Map<string, NodeJS.Timeout>();

  private constructor(
    private readonly watcher: FSWatcher,
    private readonly options: DefinitionWatcherOptions,
  ) {}

  /** Starts watching; resolves once chokidar watches every existing folder. */
  static async start(options: DefinitionWatcherOptions): Promise<DefinitionWatcher> {
    const { agentsDirectories, presetsDirectory } = options;
    const watcher = watch([...agentsDirectories, presetsDirectory], {
      ignoreInitial: true,
      // Renames are handled by the settle delays below, without chokidar's extra 100 ms.
      atomic: false,
      ignored: (file: string, stats?: Stats) => isIgnored(agentsDirectories, presetsDirectory, file, stats),
    });
    const definitionWatcher = new DefinitionWatcher(watcher, options);
    watcher.on("all", (event, file) => definitionWatcher.handle(event, path.resolve(file)));
    // chokidar drops a "change" whose mtime equals the previous one, which happens for two saves
    // within the file system's timestamp granularity; the raw notifications still arrive.
    watcher.on("raw", (_event, fileName, details) =>
      definitionWatcher.handleRaw(fileName, (details as { watchedPath?: string } | undefined)?.watchedPath),
    );
    watcher.on("error", options.onError);
    await new Promise<void>((resolve) => watcher.once("ready", resolve));
    return definitionWatcher;
  }

  async close(): Promise<void> {
    for (const timer of this.timers.values()) clearTimeout(timer);
    this.timers.clear();
    await this.watcher.close();
  }

  private handle(event: string, file: string): void {
    if (event === "unlinkDir") this.options.onFolderRemoved(file);
    else if (event === "add" || event === "change" || event === "unlink") this.settle(file);
  }

  private handleRaw(fileName: unknown, watchedPath: string | undefined): void {
    if (typeof fileName !== "string" || fileName === "" || watchedPath === undefined) return;
    const { agentsDirectories, presetsDirectory } = this.options;
    const isDefinition = (file: string) =>
      isAgentFile(agentsDirectories, file) || isPresetFile(presetsDirectory, file);
    // A file's own watcher reports its base name; a folder's watcher reports a child's name.
    const file = isDefinition(watchedPath) ? watchedPath : path.join(watchedPath, fileName);
    if (isDefinition(file)) this.settle(file);
  }

  /** Reports `file` once it has been quiet for a moment; a vanished file gets longer to come back. */
  private settle(file: string, delay = SETTLE_MILLISECONDS): void {
    const existing = this.timers.get(file);
    if (existing) clearTimeout(existing);
    const timer = setTimeout(() => {
      this.timers.delete(file);
      if (delay === SETTLE_MILLISECONDS && !existsSync(file)) {
        this.settle(file, DELETE_SETTLE_MILLISECONDS - SETTLE_MILLISECONDS);
        return;
      }
      this.options.onFiles([file]);
    }, delay);
    this.timers.set(file, timer);
  }
}

/** Skips everything but agent and preset files, and the folders that can hold them. */
function isIgnored(
  agentsDirectories: readonly string[],
  presetsDirectory: string,
  file: string,
  stats?: Stats,
): boolean {
  const absolute = path.resolve(file);
  if (agentsDirectories.includes(absolute) || absolute === presetsDirectory) return false;
  if (path.basename(absolute).startsWith(".")) return true;
  // chokidar asks first without stats; decide by name then, and again once it knows the type.
  if (!stats) return false;
  if (stats.isDirectory()) return !agentsDirectories.some((directory) => isWithin(absolute, directory));
  return !isAgentFile(agentsDirectories, absolute) && !isPresetFile(presetsDirectory, absolute);
}
