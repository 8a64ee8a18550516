import { existsSync, mkdirSync, readFileSync, statSync } from "node:fs";
import path from "node:path";
import type { Config } from "../config/config-schema.js";
import type { Logger } from "../logging/logger.js";
import type { ParsedPresetFile } from "../presets/parse-preset-file.js";
import type { AgentDefinition } from "./agent-definition.js";
import { DefinitionCatalog } from "./definition-catalog.js";
import {
  agentFolders,
  isAgentFile,
  isPresetFile,
  listAgentFiles,
  listPresetFiles,
} from "./definition-files.js";
import type { DefinitionSnapshot } from "./definition-snapshot.js";
import { DefinitionWatcher } from "./definition-watcher.js";
import { loadGrammarForCommands } from "./command-grammar.js";
import { readDefinitionFolders } from "./load-definitions.js";
import { ParsedAgentCache } from "./parsed-agent-cache.js";
import type { ParsedAgentFile } from "./parse-agent-file.js";
import { readAgentFile, readAll, readPresetFile } from "./read-parsed-files.js";

/** How much older than the read a file's modification time may be and still be read again. */
const MODIFIED_SLACK_MILLISECONDS = 2_000;

/** Ids whose status or definition changed: added, changed, became invalid or valid, removed. */
export interface DefinitionChange {
  agents: string[];
}

export interface DefinitionRegistryOptions {
  /** Follow changes to the folders (default true). */
  watch?: boolean;
  /**
   * Keep parsed agent files in `<data_dir>/cache` between starts (default false): only for the
   * holder of the data folder's lock, the one writer there.
   */
  cache?: boolean;
  logger?: Logger;
}

/**
 * The daemon's live view of agents and presets. Loads both folders once, then follows changes:
 * an edited file is re-read and re-validated with what depends on it; an invalid edit keeps the
 * last valid definition serving; a deleted file removes its agent.
 */
export class DefinitionRegistry {
  private readonly catalog: DefinitionCatalog;
  private current: DefinitionSnapshot;
  private readonly listeners = new Set<(change: DefinitionChange) => void>();
  private readonly dirtyFiles = new Set<string>();
  private work: Promise<void> = Promise.resolve();
  private watcher: DefinitionWatcher | undefined;
  private watching: Promise<void> = Promise.resolve();
  private closed = false;

  private constructor(
    private readonly config: Config,
    private readonly logger: Logger | undefined,
  ) {
    this.catalog = new DefinitionCatalog(config);
    this.current = this.catalog.snapshot();
  }

  /**
   * Loads the folders and, unless `watch: false`, starts following them. The watcher is set up
   * after the read, alongside whatever the caller does next (with 1,000 files it takes a while):
   * once it is ready, every file added, removed or modified since the read began is read again, so
   * no change made in between is missed.
   */
  static async start(config: Config, options: DefinitionRegistryOptions = {}): Promise<DefinitionRegistry> {
    const registry = new DefinitionRegistry(config, options.logger?.child({ module: "definitions" }));
    const watch = options.watch ?? true;
    if (watch) {
      // chokidar cannot watch a folder that does not exist; an empty one is created to drop files into.
      for (const folder of [config.agents_dir, config.presets_dir]) {
        if (existsSync(folder)) continue;
        mkdirSync(folder, { recursive: true });
        registry.logger?.warn({ folder }, "the folder did not exist and was created empty");
      }
    }
    const readStartedAt = Date.now();
    // The daemon holds data_dir: agent files unchanged since its last start are not parsed again.
    const cache = options.cache ? ParsedAgentCache.open(config.data_dir) : undefined;
    registry.work = registry.work.then(async () => {
      registry.catalog.apply(await readDefinitionFolders(config, cache));
      const snapshot = registry.catalog.snapshot();
      await loadGrammarForCommands(config, snapshot);
      registry.current = snapshot;
    });
    await registry.work;
    // Off the start's path, and waited for by close(): nothing is written in data_dir after it.
    if (cache)
      registry.work = registry.work.then(() =>
        cache
          .save()
          .catch((error: unknown) =>
            registry.logger?.warn({ err: error }, "could not save the parsed agents' cache"),
          ),
      );
    if (watch) registry.watching = registry.startWatching(readStartedAt);
    registry.logLoaded();
    return registry;
  }

  snapshot(): DefinitionSnapshot {
    return this.current;
  }

  /** The definition serving `id` now (the last valid one while its file is invalid). */
  get(id: string): AgentDefinition | undefined {
    return this.current.get(id);
  }

  /** Calls `listener` after each reload that changed something; returns the unsubscribe function. */
  onChange(listener: (change: DefinitionChange) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  async close(): Promise<void> {
    this.closed = true;
    await this.watching;
    await this.watcher?.close();
    await this.work;
    this.listeners.clear();
  }

  private markDirty(files: readonly string[]): void {
    if (this.closed || files.length === 0) return;
    const wasIdle = this.dirtyFiles.size === 0;
    for (const file of files) this.dirtyFiles.add(file);
    if (wasIdle) this.work = this.work.then(() => this.reload());
  }

  private async startWatching(readStartedAt: number): Promise<void> {
    try {
      const watcher = await DefinitionWatcher.start({
        // Extra folders (agents_dirs) are optional: one that does not exist is not watched.
        agentsDirectories: agentFolders(this.config).filter(
          (folder) => folder === this.config.agents_dir || existsSync(folder),
        ),
        presetsDirectory: this.config.presets_dir,
        onFiles: (files) => this.markDirty(files),
        onFolderRemoved: (folder) => this.markDirty(this.filesUnder(folder)),
        onError: (error) => this.logger?.warn({ err: error }, "watching the definition folders failed"),
      });
      if (this.closed) {
        await watcher.close();
        return;
      }
      this.watcher = watcher;
      this.markDirty(await this.changedSince(readStartedAt));
    } catch (error) {
      this.logger?.warn({ err: error }, "watching the definition folders failed");
    }
  }

  /** Files added, removed or modified since `time`: the watcher was not there yet to see them. */
  private async changedSince(time: number): Promise<string[]> {
    const [agentFiles, presetFiles] = await Promise.all([
      listAgentFiles(agentFolders(this.config)),
      listPresetFiles(this.config.presets_dir),
    ]);
    const listed = new Set([...agentFiles, ...presetFiles]);
    const known = new Set(this.catalog.files());
    const changed = [...known].filter((file) => !listed.has(file));
    for (const file of listed) {
      const modified = statSync(file, { throwIfNoEntry: false })?.mtimeMs;
      // Coarse file-system clocks: a file written shortly before the read may carry an older time,
      // so a recent one is compared byte for byte with what was read.
      const recent = modified === undefined || modified >= time - MODIFIED_SLACK_MILLISECONDS;
      if (!known.has(file) || (recent && !this.sameBytes(file))) changed.push(file);
    }
    return changed;
  }

  private sameBytes(file: string): boolean {
    try {
      return this.catalog.bytesOf(file)?.equals(readFileSync(file)) ?? false;
    } catch {
      return false;
    }
  }

  private async reload(): Promise<void> {
    const files = [...this.dirtyFiles];
    this.dirtyFiles.clear();
    try {
      const agents = readAll(
        files.filter((file) => isAgentFile(agentFolders(this.config), file)),
        readAgentFile,
      );
      const presets = readAll(
        files.filter((file) => isPresetFile(this.config.presets_dir, file)),
        readPresetFile,
      );
      if (this.closed) return;
      const changed = this.catalog.apply({ agents, presets });
      if (changed.length === 0) return;
      const snapshot = this.catalog.snapshot();
      // A hook added now is read with the bash grammar by the next policy prepared.
      await loadGrammarForCommands(this.config, snapshot);
      this.current = snapshot;
      this.logChanges(changed, agents, presets);
      for (const listener of [...this.listeners]) {
        try {
          listener({ agents: changed });
        } catch (error) {
          this.logger?.error({ err: error }, "a definition change listener failed");
        }
      }
    } catch (error) {
      this.logger?.error({ err: error }, "reloading definitions failed");
    }
  }

  private filesUnder(folder: string): string[] {
    const prefix = folder.endsWith(path.sep) ? folder : `${folder}${path.sep}`;
    return this.catalog.files().filter((file) => file.startsWith(prefix));
  }

  private logLoaded(): void {
    const { agents, presets } = this.current;
    const invalid = agents.filter((agent) => !agent.valid);
    this.logger?.info(
      { agents: agents.length, presets: presets.length, invalid: invalid.length },
      "definitions loaded",
    );
    for (const agent of invalid) {
      this.logger?.warn(
        { agent: agent.id, errors: agent.errors.map((error) => error.describe()) },
        "invalid agent",
      );
    }
  }

  private logChanges(
    changed: readonly string[],
    agents: ReadonlyMap<string, ParsedAgentFile | undefined>,
    presets: ReadonlyMap<string, ParsedPresetFile | undefined>,
  ): void {
    const byId = new Map(this.current.agents.map((status) => [status.id, status]));
    for (const id of changed) {
      const status = byId.get(id);
      if (!status) this.logger?.info({ agent: id }, "agent removed");
      else if (status.valid) this.logger?.info({ agent: id, hash: status.definition?.hash }, "agent loaded");
      else {
        this.logger?.warn(
          {
            agent: id,
            errors: status.errors.map((error) => error.describe()),
            serving: status.definition?.hash,
          },
          status.definition ? "agent invalid; the last valid version keeps serving" : "agent invalid",
        );
      }
    }
    this.logger?.debug({ files: [...agents.keys(), ...presets.keys()] }, "definition files reloaded");
  }
}
